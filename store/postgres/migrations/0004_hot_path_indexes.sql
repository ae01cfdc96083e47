-- statewright store schema on PostgreSQL, version 4: fewer index pages per
-- decision (see store/sqlite's 0004_hot_path_indexes.sql).
DROP INDEX statewright_events_run;
CREATE INDEX statewright_events_legacy_run ON statewright_events (run_id, seq) WHERE chain = '';
DROP INDEX statewright_calls_run;
