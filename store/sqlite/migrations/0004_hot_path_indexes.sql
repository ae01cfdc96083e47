-- statewright store schema, version 4: fewer index pages per decision.
-- With per-run chains, a run's events are found through events_chain
-- (chain = the run id); only the legacy chain's events still need an index
-- on run_id. A run's call records are found through the calls' primary key
-- (its session), so calls_run goes.
DROP INDEX events_run;
CREATE INDEX events_legacy_run ON events (run_id, seq) WHERE chain = '';
DROP INDEX calls_run;
