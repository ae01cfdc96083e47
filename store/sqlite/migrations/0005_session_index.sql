-- statewright store schema, version 5: one index page fewer per decision.
-- events_session put every event's (session_key, seq) in an index whose
-- insertion point differs by session, so each decision dirtied a leaf of
-- its own there. A run's events are its chain (events_chain; the legacy
-- chain's through events_legacy_run), and every event of a run belongs to
-- the run's session, so a session's events are found through its runs;
-- only the events outside any run keep an index by session.
DROP INDEX events_session;
CREATE INDEX events_outside_runs ON events (session_key, seq) WHERE run_id = '';
