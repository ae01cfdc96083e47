-- statewright store schema, version 1.
-- Times are Unix nanoseconds (UTC); JSON columns hold compact JSON or NULL.

CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;

CREATE TABLE runs (
	id               TEXT PRIMARY KEY,
	session_key      TEXT NOT NULL,
	workflow_id      TEXT NOT NULL,
	workflow_source  TEXT NOT NULL DEFAULT '',
	snapshot         BLOB,
	snapshot_digest  TEXT NOT NULL DEFAULT '',
	state            TEXT NOT NULL,
	context          TEXT,
	history          TEXT,
	iterations       INTEGER NOT NULL DEFAULT 0,
	counters         TEXT,
	files_edited     TEXT,
	pending_approval TEXT,
	status           TEXT NOT NULL CHECK (status IN
		('active', 'awaiting_approval', 'paused', 'completed', 'deactivated', 'failed')),
	audit_only       INTEGER NOT NULL DEFAULT 0,
	evidence         TEXT,
	revision         INTEGER NOT NULL CHECK (revision > 0),
	created_at       INTEGER NOT NULL,
	updated_at       INTEGER NOT NULL
) STRICT;

-- A session has at most one live run.
CREATE UNIQUE INDEX runs_live_session ON runs (session_key)
	WHERE status IN ('active', 'awaiting_approval', 'paused');
CREATE INDEX runs_session ON runs (session_key, created_at);
CREATE INDEX runs_created ON runs (created_at);

-- The append-only, hash-chained event log. seq is assigned by the store:
-- 1, 2, 3, ... without gaps.
CREATE TABLE events (
	seq          INTEGER PRIMARY KEY,
	run_id       TEXT NOT NULL DEFAULT '',
	session_key  TEXT NOT NULL DEFAULT '',
	time         INTEGER NOT NULL,
	kind         TEXT NOT NULL,
	state        TEXT NOT NULL DEFAULT '',
	tool         TEXT NOT NULL DEFAULT '',
	input_digest TEXT NOT NULL DEFAULT '',
	decision     TEXT NOT NULL DEFAULT '',
	rule         TEXT NOT NULL DEFAULT '',
	reason       TEXT NOT NULL DEFAULT '',
	tool_use_id  TEXT NOT NULL DEFAULT '',
	data         TEXT,
	prev_hash    TEXT NOT NULL,
	hash         TEXT NOT NULL
) STRICT;

-- Every index costs a page write per decision (and WAL the next hook process
-- must read back), so only the history views' lookups are indexed; pruning by
-- age and filtering by tool_use_id scan.
CREATE INDEX events_run ON events (run_id, seq);
CREATE INDEX events_session ON events (session_key, seq);

-- Events are never updated; only a pruned prefix (seq <= the anchor that
-- Prune writes first) may be deleted.
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
	SELECT RAISE(ABORT, 'statewright: events are append-only');
END;

CREATE TRIGGER events_prune_only BEFORE DELETE ON events
WHEN OLD.seq > COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'anchor_seq'), 0)
BEGIN
	SELECT RAISE(ABORT, 'statewright: events are append-only (only a pruned prefix may be deleted)');
END;

-- One row per hook phase of a tool call: idempotency and effect reservation.
CREATE TABLE calls (
	session_key TEXT NOT NULL,
	tool_use_id TEXT NOT NULL,
	phase       TEXT NOT NULL CHECK (phase IN ('pre', 'post')),
	run_id      TEXT NOT NULL DEFAULT '',
	state       TEXT NOT NULL DEFAULT '',
	outcome     TEXT,
	effects     TEXT,
	status      TEXT NOT NULL CHECK (status IN ('reserved', 'settled', 'failed', 'done')),
	created_at  INTEGER NOT NULL,
	settled_at  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (session_key, tool_use_id, phase)
) STRICT, WITHOUT ROWID;

CREATE INDEX calls_run ON calls (run_id, created_at);
