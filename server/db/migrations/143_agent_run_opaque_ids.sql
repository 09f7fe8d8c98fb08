-- Issue 24 (seed 000): metadata.run_id is the caller's opaque string (1-128 characters of
-- [A-Za-z0-9._:-]), and it is the run's id; runs without one still get a UUID (as text).
ALTER TABLE agent_run_turns DROP CONSTRAINT IF EXISTS agent_run_turns_run_id_fkey;
ALTER TABLE agent_runs ALTER COLUMN id TYPE text USING id::text;
ALTER TABLE agent_run_turns ALTER COLUMN run_id TYPE text USING run_id::text;
ALTER TABLE agent_run_turns ADD CONSTRAINT agent_run_turns_run_id_fkey FOREIGN KEY (run_id) REFERENCES agent_runs (id) ON DELETE CASCADE;
