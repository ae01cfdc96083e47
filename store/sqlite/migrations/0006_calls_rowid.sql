-- statewright store schema, version 6: call records appended in the order
-- they are written. The calls table was WITHOUT ROWID, its rows (a few
-- hundred bytes, about ten to a page) kept in (session_key, tool_use_id,
-- phase) order, and a harness's tool_use_ids are random: every decision
-- inserted its record into a leaf of its own in the middle of the table,
-- which split every few inserts, so each dirtied two to three table pages
-- (and often a parent) in the WAL. As a rowid table the rows go to the
-- table's end, many to a page, and only the primary key's index (a few
-- dozen bytes an entry) is written in key order. Same columns, key and
-- constraints; the CHECK on status is spelled as comparisons: SQLite codes
-- an IN list of more than two constants as an ephemeral table, which every
-- INSERT (and every UPDATE of status) built anew, a b-tree opened and
-- closed in memory per call record.
ALTER TABLE calls RENAME TO calls_v5;

CREATE TABLE calls (
	session_key TEXT NOT NULL,
	tool_use_id TEXT NOT NULL,
	phase       TEXT NOT NULL CHECK (phase IN ('pre', 'post')),
	run_id      TEXT NOT NULL DEFAULT '',
	state       TEXT NOT NULL DEFAULT '',
	outcome     TEXT,
	effects     TEXT,
	status      TEXT NOT NULL CHECK (status = 'reserved' OR status = 'settled' OR status = 'failed' OR status = 'done'),
	created_at  INTEGER NOT NULL,
	settled_at  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (session_key, tool_use_id, phase)
) STRICT;

-- Copied in the old table's key order, streamed: sorting by time would
-- build the whole table in memory first (temp_store=MEMORY), and nothing
-- reads the records in rowid order.
INSERT INTO calls (session_key, tool_use_id, phase, run_id, state, outcome, effects, status, created_at, settled_at)
SELECT session_key, tool_use_id, phase, run_id, state, outcome, effects, status, created_at, settled_at
FROM calls_v5;

DROP TABLE calls_v5;
