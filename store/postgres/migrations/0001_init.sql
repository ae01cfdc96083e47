-- statewright store schema on PostgreSQL, version 1: the same tables and
-- guarantees as store/sqlite's 0001_init.sql. The tables live in the
-- connection's current schema (the first entry of search_path), so one
-- database can hold several stores in several schemas.
-- Times are Unix nanoseconds (UTC) in BIGINT, as on SQLite: timestamptz
-- keeps microseconds only. JSON columns are TEXT holding compact JSON (or
-- NULL), byte for byte what the caller wrote (jsonb would reorder keys).

CREATE TABLE statewright_meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);

CREATE TABLE statewright_runs (
	id               TEXT PRIMARY KEY,
	ord              BIGINT GENERATED ALWAYS AS IDENTITY,
	session_key      TEXT NOT NULL,
	workflow_id      TEXT NOT NULL,
	workflow_source  TEXT NOT NULL DEFAULT '',
	snapshot         BYTEA,
	snapshot_digest  TEXT NOT NULL DEFAULT '',
	state            TEXT NOT NULL,
	context          TEXT,
	history          TEXT,
	iterations       BIGINT NOT NULL DEFAULT 0,
	counters         TEXT,
	files_edited     TEXT,
	pending_approval TEXT,
	status           TEXT NOT NULL CHECK (status IN
		('active', 'awaiting_approval', 'paused', 'completed', 'deactivated', 'failed')),
	audit_only       BOOLEAN NOT NULL DEFAULT false,
	evidence         TEXT,
	revision         BIGINT NOT NULL CHECK (revision > 0),
	created_at       BIGINT NOT NULL,
	updated_at       BIGINT NOT NULL
);

-- A session has at most one live run.
CREATE UNIQUE INDEX statewright_runs_live_session ON statewright_runs (session_key)
	WHERE status IN ('active', 'awaiting_approval', 'paused');
CREATE INDEX statewright_runs_session ON statewright_runs (session_key, created_at);
CREATE INDEX statewright_runs_created ON statewright_runs (created_at, ord);

-- The chain's head and the prune anchor: one row. Every transaction that
-- appends events locks it (SELECT ... FOR UPDATE), which gives the log its
-- gapless order across every process and replica.
CREATE TABLE statewright_chain (
	id          INTEGER PRIMARY KEY CHECK (id = 1),
	head_seq    BIGINT NOT NULL,
	head_hash   TEXT NOT NULL,
	anchor_seq  BIGINT NOT NULL,
	anchor_hash TEXT NOT NULL
);
INSERT INTO statewright_chain (id, head_seq, head_hash, anchor_seq, anchor_hash) VALUES (1, 0, '', 0, '');

-- The append-only, hash-chained event log: seq 1, 2, 3, ... without gaps.
CREATE TABLE statewright_events (
	seq          BIGINT PRIMARY KEY,
	run_id       TEXT NOT NULL DEFAULT '',
	session_key  TEXT NOT NULL DEFAULT '',
	time         BIGINT NOT NULL,
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
);
CREATE INDEX statewright_events_run ON statewright_events (run_id, seq);
CREATE INDEX statewright_events_session ON statewright_events (session_key, seq);

-- Events are never updated; only a pruned prefix (seq <= the anchor that
-- Prune writes first) may be deleted; TRUNCATE is refused.
CREATE FUNCTION statewright_events_no_update() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	RAISE EXCEPTION 'statewright: events are append-only';
END $$;

CREATE FUNCTION statewright_events_prune_only() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM gone WHERE seq > (SELECT anchor_seq FROM statewright_chain WHERE id = 1)) THEN
		RAISE EXCEPTION 'statewright: events are append-only (only a pruned prefix may be deleted)';
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER statewright_events_no_update BEFORE UPDATE ON statewright_events
	FOR EACH STATEMENT EXECUTE FUNCTION statewright_events_no_update();
CREATE TRIGGER statewright_events_no_truncate BEFORE TRUNCATE ON statewright_events
	FOR EACH STATEMENT EXECUTE FUNCTION statewright_events_no_update();
CREATE TRIGGER statewright_events_prune_only AFTER DELETE ON statewright_events
	REFERENCING OLD TABLE AS gone
	FOR EACH STATEMENT EXECUTE FUNCTION statewright_events_prune_only();

-- One row per hook phase of a tool call: idempotency and effect reservation.
CREATE TABLE statewright_calls (
	session_key TEXT NOT NULL,
	tool_use_id TEXT NOT NULL,
	phase       TEXT NOT NULL CHECK (phase IN ('pre', 'post')),
	run_id      TEXT NOT NULL DEFAULT '',
	state       TEXT NOT NULL DEFAULT '',
	outcome     TEXT,
	effects     TEXT,
	status      TEXT NOT NULL CHECK (status IN ('reserved', 'settled', 'failed', 'done')),
	created_at  BIGINT NOT NULL,
	settled_at  BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (session_key, tool_use_id, phase)
);
CREATE INDEX statewright_calls_run ON statewright_calls (run_id, created_at);
