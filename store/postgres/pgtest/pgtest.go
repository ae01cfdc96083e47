// Package pgtest gives tests a PostgreSQL store location: a fresh, empty
// schema on the server named by $STATEWRIGHT_TEST_POSTGRES (which
// scripts/start-postgres.sh starts and prints). In CI ($CI=true, or
// $STATEWRIGHT_REQUIRE_POSTGRES=1, which .ci/run sets) a missing server
// fails the test; elsewhere the test is skipped with a message that says so
// and how to start one.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the environment variable holding the test server's URL
// (postgres://user@127.0.0.1:PORT/DB?sslmode=disable).
const EnvURL = "STATEWRIGHT_TEST_POSTGRES"

// EnvRequire names the variable that makes a missing server a failure
// (.ci/run sets it); CI=true does too.
const EnvRequire = "STATEWRIGHT_REQUIRE_POSTGRES"

// Required reports whether a missing test server must fail the tests:
// in CI ($CI=true) or with $STATEWRIGHT_REQUIRE_POSTGRES=1.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv(EnvRequire) == "1"
}

// ServerURL returns the test server's URL. Without one it fails the test
// in CI and skips it elsewhere, loudly.
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u != "" {
		return u
	}
	msg := "no PostgreSQL test server: $" + EnvURL + " is not set; start one with " +
		"`eval \"$(bash scripts/start-postgres.sh)\"` (it prints the variable)"
	if Required() {
		t.Fatal("CI: " + msg)
	}
	fmt.Fprintln(os.Stderr, "SKIPPING PostgreSQL tests:", msg)
	t.Skip("SKIPPED, not passed: " + msg)
	return ""
}

// Schema creates a fresh schema on the test server and returns a URL whose
// search_path selects it; the schema is dropped when the test ends.
func Schema(t testing.TB) string {
	t.Helper()
	base := ServerURL(t)
	name, err := CreateSchema(base)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := DropSchema(base, name); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	u, err := WithSchema(base, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return u
}

// CreateSchema creates a schema with a fresh random name on the server at
// base and returns its name.
func CreateSchema(base string) (string, error) {
	b := make([]byte, 8)
	rand.Read(b)
	name := "swtest_" + hex.EncodeToString(b)
	return name, ExecSQL(base, "CREATE SCHEMA "+name)
}

// WithSchema returns base with its search_path set to schema.
func WithSchema(base, schema string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("$%s: %w", EnvURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// DropSchema drops a schema and everything in it.
func DropSchema(base, schema string) error {
	return ExecSQL(base, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
}

// ExecSQL runs one statement on its own connection to base.
func ExecSQL(base, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return fmt.Errorf("connect to $%s: %w", EnvURL, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}
