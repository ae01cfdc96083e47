-- statewright store schema, version 3: workflow snapshots in a table of
-- their own, by digest. A run row used to carry its whole workflow, so
-- every decision's UPDATE of the run rewrote it (and a large workflow's
-- overflow pages) into the WAL; now a run names its snapshot's digest and
-- a snapshot is written once, however many runs share it.

CREATE TABLE snapshots (
	digest TEXT PRIMARY KEY,
	body   BLOB NOT NULL
) STRICT;

INSERT OR IGNORE INTO snapshots (digest, body)
SELECT snapshot_digest, snapshot FROM runs WHERE snapshot IS NOT NULL AND snapshot_digest <> '';

UPDATE runs SET snapshot = NULL WHERE snapshot IS NOT NULL AND snapshot_digest <> '';
