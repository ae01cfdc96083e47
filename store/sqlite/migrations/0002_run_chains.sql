-- statewright store schema, version 2: per-run hash chains and signed checkpoints.
--
-- Every event now belongs to a chain: its run's (chain = the run id), its
-- session's outside any run ('session:' || key), or the store's own
-- ('store'); chain_seq is its place there. Events written before this
-- migration keep chain '' and chain_seq 0: they form the legacy global
-- chain, ordered by seq and verified as it was written.

ALTER TABLE events ADD COLUMN chain TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN chain_seq INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX events_chain ON events (chain, chain_seq) WHERE chain <> '';

-- Where each chain stands: its newest event (seq = chain_seq, or the store
-- seq in the legacy chain) and its anchor, the last event pruned from it.
CREATE TABLE heads (
	chain       TEXT PRIMARY KEY,
	seq         INTEGER NOT NULL,
	hash        TEXT NOT NULL,
	anchor_seq  INTEGER NOT NULL DEFAULT 0,
	anchor_hash TEXT NOT NULL DEFAULT ''
) STRICT, WITHOUT ROWID;

-- The legacy global chain's head and anchor (when the store has a log).
INSERT INTO heads (chain, seq, hash, anchor_seq, anchor_hash)
SELECT '',
	COALESCE((SELECT max(seq) FROM events), CAST((SELECT value FROM meta WHERE key = 'anchor_seq') AS INTEGER)),
	COALESCE((SELECT hash FROM events ORDER BY seq DESC LIMIT 1), (SELECT value FROM meta WHERE key = 'anchor_hash')),
	COALESCE(CAST((SELECT value FROM meta WHERE key = 'anchor_seq') AS INTEGER), 0),
	COALESCE((SELECT value FROM meta WHERE key = 'anchor_hash'), '')
WHERE EXISTS (SELECT 1 FROM events) OR EXISTS (SELECT 1 FROM meta WHERE key = 'anchor_seq');

-- The last event pruned from the whole log keeps its meta keys
-- (anchor_seq, anchor_hash); a chain may be pruned only up to its anchor.
DROP TRIGGER events_prune_only;
CREATE TRIGGER events_prune_only BEFORE DELETE ON events
WHEN (CASE WHEN OLD.chain = '' THEN OLD.seq ELSE OLD.chain_seq END) >
	COALESCE((SELECT anchor_seq FROM heads WHERE chain = OLD.chain), 0)
BEGIN
	SELECT RAISE(ABORT, 'statewright: events are append-only (only a pruned prefix may be deleted)');
END;

-- Signed checkpoints over every chain's head, chained to one another. The
-- newest keeps the heads it covers (JSON); older ones drop them.
CREATE TABLE checkpoints (
	seq             INTEGER PRIMARY KEY,
	time            INTEGER NOT NULL,
	heads_hash      TEXT NOT NULL,
	chains          INTEGER NOT NULL,
	prev_hash       TEXT NOT NULL,
	key_id          TEXT NOT NULL,
	public_key      TEXT NOT NULL,
	next_key_id     TEXT NOT NULL DEFAULT '',
	next_public_key TEXT NOT NULL DEFAULT '',
	hash            TEXT NOT NULL,
	signature       TEXT NOT NULL,
	heads           TEXT
) STRICT;
