package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// Salvaged is what Salvage read from a damaged store file.
type Salvaged struct {
	// Events is the number of events written; First and Last their
	// lowest and highest Seq (0 when none).
	Events      int64
	First, Last int64
	// Skipped are the Seq ranges the damage made unreadable between
	// readable events, [from, to] each.
	Skipped [][2]int64
	// Stopped says why reading ended before the log's end ("" when the
	// whole readable log was read to its end).
	Stopped string
}

// maxSkip bounds how far past an unreadable event Salvage looks for the
// next readable one (powers of two up to it).
const maxSkip = 1 << 24

// Salvage reads what it can of the event log of the SQLite store at path,
// read-only, and writes each readable event to w as one JSON line in Seq
// order, as store.ExportJSONL does (so store.VerifyJSONL checks it). It
// needs no readable meta or heads: it reads the events table row by row,
// and where damage stops a read it looks further on (Seq past the last good
// one) and goes on from the next readable event. Only a file SQLite cannot
// read at all, or a failure to write w, is an error.
func Salvage(ctx context.Context, path string, w io.Writer) (Salvaged, error) {
	var out Salvaged
	abs, err := filepath.Abs(path)
	if err != nil {
		return out, fmt.Errorf("store: salvage %s: %w", path, err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	db := sql.OpenDB(connector{dsn: u.String() + "?mode=ro"})
	defer db.Close()
	db.SetMaxOpenConns(1)
	after := int64(-1 << 62)
	for {
		n, last, err := salvageFrom(ctx, db, after, w, &out)
		if errors.Is(err, errWrite) {
			return out, err
		}
		if err == nil {
			return out, nil
		}
		if n == 0 && out.Events == 0 && after < 0 {
			// Not one event: is the file readable at all?
			if _, perr := db.ExecContext(ctx, "SELECT 1 FROM sqlite_schema LIMIT 1"); perr != nil {
				return out, fmt.Errorf("store: salvage %s: SQLite cannot read the file: %w", abs, perr)
			}
		}
		if n > 0 {
			after = last
		}
		// Look past the damage for the next readable event.
		from := after + 1
		if after < 0 {
			from = 1
		}
		next := int64(-1)
		for skip := int64(1); skip <= maxSkip && next < 0; skip *= 2 {
			var seq int64
			if e := db.QueryRowContext(ctx, "SELECT seq FROM events WHERE seq >= ? ORDER BY seq LIMIT 1", from+skip).Scan(&seq); e == nil {
				next = seq
			} else if errors.Is(e, sql.ErrNoRows) {
				break
			}
		}
		if next < 0 {
			out.Stopped = fmt.Sprintf("no readable event after seq %d: %v", max(after, 0), err)
			return out, nil
		}
		if n := len(out.Skipped); n > 0 && out.Skipped[n-1][1] == from-1 {
			out.Skipped[n-1][1] = next - 1 // the same damaged stretch
		} else {
			out.Skipped = append(out.Skipped, [2]int64{from, next - 1})
		}
		after = next - 1
	}
}

// errWrite marks a failure to write the salvaged events.
var errWrite = errors.New("store: salvage: write")

// salvageFrom streams the events after Seq after to w until the end or
// the first unreadable row; it returns how many it wrote and the last Seq.
func salvageFrom(ctx context.Context, db *sql.DB, after int64, w io.Writer, out *Salvaged) (n, last int64, err error) {
	rows, err := db.QueryContext(ctx, "SELECT "+backend.EventColumnList+" FROM events WHERE seq > ? ORDER BY seq", after)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var e store.Event
		if err := backend.ScanEvent(rows, &e); err != nil {
			return n, last, err
		}
		if err := store.WriteEventJSONL(w, &e); err != nil {
			return n, last, fmt.Errorf("%w: %w", errWrite, err)
		}
		n++
		last = e.Seq
		out.Events++
		if out.First == 0 {
			out.First = e.Seq
		}
		out.Last = e.Seq
	}
	return n, last, rows.Err()
}

// FileSchemaVersion reads the schema version of the SQLite file at path,
// read-only (0 for a file that is not a statewright store yet).
func FileSchemaVersion(ctx context.Context, path string) (int, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	db := sql.OpenDB(connector{dsn: u.String() + "?mode=ro"})
	defer db.Close()
	var v int
	err = db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}
