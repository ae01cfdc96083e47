package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/statewright-go/statewright/store/postgres/pgtest"
)

// TestPostgresScripts runs the CLI scripts in testdata/postgres against a
// PostgreSQL store: each script gets a fresh schema, its URL in $PGSTORE.
// The test server comes from $STATEWRIGHT_TEST_POSTGRES (see
// scripts/start-postgres.sh); without one the test fails in CI and is
// skipped, loudly, elsewhere. Besides `exits`, scripts may use
//
//	pgrecreate
//
// which drops the script's schema and creates it again, empty (a store
// dropped and recreated under the same URL).
func TestPostgresScripts(t *testing.T) {
	base := pgtest.ServerURL(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/postgres",
		Setup: func(env *testscript.Env) error {
			if err := setup(env); err != nil {
				return err
			}
			name, err := pgtest.CreateSchema(base)
			if err != nil {
				return err
			}
			env.Defer(func() {
				if err := pgtest.DropSchema(base, name); err != nil {
					env.T().Log(err)
				}
			})
			u, err := pgtest.WithSchema(base, name)
			if err != nil {
				return err
			}
			env.Setenv("PGSTORE", u)
			env.Setenv("PGSCHEMA", name)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": cmdExits,
			"pgrecreate": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 0 {
					ts.Fatalf("usage: pgrecreate")
				}
				name := ts.Getenv("PGSCHEMA")
				ts.Check(pgtest.DropSchema(base, name))
				ts.Check(pgtest.ExecSQL(base, "CREATE SCHEMA "+name))
			},
		},
	})
}
