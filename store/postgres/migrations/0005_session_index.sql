-- statewright store schema on PostgreSQL, version 5: one index entry fewer
-- per event (as store/sqlite's 0005_session_index.sql). A run's events are
-- its chain (statewright_events_chain; the legacy chain's through
-- statewright_events_legacy_run), and every event of a run belongs to the
-- run's session, so a session's events are found through its runs; only
-- the events outside any run keep an index by session.
DROP INDEX statewright_events_session;
CREATE INDEX statewright_events_outside_runs ON statewright_events (session_key, seq) WHERE run_id = '';
