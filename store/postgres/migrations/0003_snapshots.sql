-- statewright store schema on PostgreSQL, version 3: workflow snapshots in
-- a table of their own, by digest (see store/sqlite's 0003_snapshots.sql):
-- a decision's UPDATE of its run no longer rewrites the workflow.

CREATE TABLE statewright_snapshots (
	digest TEXT PRIMARY KEY,
	body   BYTEA NOT NULL
);

INSERT INTO statewright_snapshots (digest, body)
SELECT DISTINCT ON (snapshot_digest) snapshot_digest, snapshot FROM statewright_runs
WHERE snapshot IS NOT NULL AND snapshot_digest <> ''
ON CONFLICT DO NOTHING;

UPDATE statewright_runs SET snapshot = NULL WHERE snapshot IS NOT NULL AND snapshot_digest <> '';
