-- Headless runs (issue 11): one row per /api/agent/v1 run. A run is one or more engine turns of
-- its conversation (the first turn, then each resume after an approval), linked in
-- agent_run_turns, so a resumed run keeps its run_id; its status is read from the last turn's
-- engine run (done -> completed, paused -> awaiting_approval) unless the row says queued.
CREATE TABLE IF NOT EXISTS agent_runs (
  id               uuid PRIMARY KEY,
  tenant           text NOT NULL,
  user_id          uuid NOT NULL,
  username         text NOT NULL,
  user_key         text NOT NULL,
  session_id       uuid,
  -- stream / sync: /v1/chat/completions; background: /v1/runs (executed by the job queue).
  mode             text NOT NULL CHECK (mode IN ('stream', 'sync', 'background')),
  status           text NOT NULL DEFAULT 'queued'
                   CHECK (status IN ('queued', 'running', 'cancelled', 'failed')),
  text             text NOT NULL,
  system_prompt    text,
  tool_policy      jsonb,
  metadata         jsonb NOT NULL DEFAULT '{}',
  auth_provider    text NOT NULL,
  attempts         integer NOT NULL DEFAULT 0,
  cancel_requested boolean NOT NULL DEFAULT false,
  error_code       text,
  error_message    text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  started_at       timestamptz
);
CREATE INDEX IF NOT EXISTS agent_runs_by_tenant ON agent_runs (tenant, created_at DESC, id);
CREATE INDEX IF NOT EXISTS agent_runs_by_session ON agent_runs (session_id, created_at DESC);

CREATE TABLE IF NOT EXISTS agent_run_turns (
  engine_run_id uuid PRIMARY KEY,
  run_id        uuid NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
  linked_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS agent_run_turns_by_run ON agent_run_turns (run_id, linked_at);

-- Approval records carry the seed's policy fields (filled from the policy decision; until a
-- policy file exists, today's rule: a dangerous tool requires approval, built in), who decided,
-- and the reason they gave.
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS policy_scope text NOT NULL DEFAULT 'builtin';
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS policy_action text NOT NULL DEFAULT 'require_approval';
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS policy_matched boolean NOT NULL DEFAULT false;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS decision_note text;
CREATE INDEX IF NOT EXISTS approvals_pending_expiry ON approvals (expires_at) WHERE status = 'pending';
