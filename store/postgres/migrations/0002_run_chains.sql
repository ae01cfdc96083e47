-- statewright store schema on PostgreSQL, version 2: per-run hash chains,
-- signed checkpoints, and no global lock on the hot path (see store/sqlite's
-- 0002_run_chains.sql for the model).
--
-- Events written before this migration keep chain '' and chain_seq 0: the
-- legacy global chain. statewright_chain, the one row every appending
-- transaction used to lock, is dropped: a replica still running the older
-- binary fails on its next append (and denies) instead of writing a global
-- chain into a store of per-run chains.

ALTER TABLE statewright_events ADD COLUMN chain TEXT NOT NULL DEFAULT '';
ALTER TABLE statewright_events ADD COLUMN chain_seq BIGINT NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX statewright_events_chain ON statewright_events (chain, chain_seq) WHERE chain <> '';

-- Store-wide order without a lock: a sequence (gaps where a transaction
-- rolls back; concurrent sessions may commit out of seq order).
CREATE SEQUENCE statewright_events_seq;
SELECT setval('statewright_events_seq', GREATEST(head_seq, 1), head_seq > 0) FROM statewright_chain;
ALTER TABLE statewright_events ALTER COLUMN seq SET DEFAULT nextval('statewright_events_seq');

CREATE TABLE statewright_heads (
	chain       TEXT PRIMARY KEY,
	seq         BIGINT NOT NULL,
	hash        TEXT NOT NULL,
	anchor_seq  BIGINT NOT NULL DEFAULT 0,
	anchor_hash TEXT NOT NULL DEFAULT ''
);
INSERT INTO statewright_heads (chain, seq, hash, anchor_seq, anchor_hash)
SELECT '', head_seq, head_hash, anchor_seq, anchor_hash FROM statewright_chain WHERE head_seq > 0 OR anchor_seq > 0;

-- The last event pruned from the whole log.
INSERT INTO statewright_meta (key, value)
SELECT 'anchor_seq', anchor_seq::text FROM statewright_chain WHERE anchor_seq > 0
UNION ALL SELECT 'anchor_hash', anchor_hash FROM statewright_chain WHERE anchor_seq > 0;

CREATE OR REPLACE FUNCTION statewright_events_prune_only() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM gone g WHERE (CASE WHEN g.chain = '' THEN g.seq ELSE g.chain_seq END) >
		COALESCE((SELECT h.anchor_seq FROM statewright_heads h WHERE h.chain = g.chain), 0)) THEN
		RAISE EXCEPTION 'statewright: events are append-only (only a pruned prefix may be deleted)';
	END IF;
	RETURN NULL;
END $$;

DROP TABLE statewright_chain;

-- A transaction sends its writes in one pipeline with its COMMIT; a write
-- that must touch exactly one row checks it here, so that a mismatch aborts
-- the whole transaction (SQLSTATE SW001) instead of committing the rest.
CREATE FUNCTION statewright_expect(n BIGINT, want BIGINT, what TEXT) RETURNS BIGINT LANGUAGE plpgsql AS $$
BEGIN
	IF n <> want THEN
		RAISE EXCEPTION 'statewright: %: % rows, expected %', what, n, want USING ERRCODE = 'SW001';
	END IF;
	RETURN n;
END $$;

CREATE TABLE statewright_checkpoints (
	seq             BIGINT PRIMARY KEY,
	time            BIGINT NOT NULL,
	heads_hash      TEXT NOT NULL,
	chains          BIGINT NOT NULL,
	prev_hash       TEXT NOT NULL,
	key_id          TEXT NOT NULL,
	public_key      TEXT NOT NULL,
	next_key_id     TEXT NOT NULL DEFAULT '',
	next_public_key TEXT NOT NULL DEFAULT '',
	hash            TEXT NOT NULL,
	signature       TEXT NOT NULL,
	heads           TEXT
);
