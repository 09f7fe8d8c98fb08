-- Human-in-the-loop approvals: one row per paused dangerous tool call.
CREATE TABLE IF NOT EXISTS approvals (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  conversation_id uuid NOT NULL,
  thread_id       text NOT NULL,
  interrupt_id    text NOT NULL,
  tool_call_id    text NOT NULL,
  tool            text NOT NULL,
  args            jsonb NOT NULL,
  args_hash       text NOT NULL,
  prompt          text NOT NULL,
  requested_by    text NOT NULL,
  status          text NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
  reason          text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  resolved_at     timestamptz,
  resolved_by     text,
  UNIQUE (thread_id, interrupt_id)
);

CREATE INDEX IF NOT EXISTS approvals_pending_by_conversation
  ON approvals (conversation_id) WHERE status = 'pending';
