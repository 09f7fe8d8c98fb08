-- Every tool call, allowed or refused.
CREATE TABLE IF NOT EXISTS audit_log (
  id              bigserial PRIMARY KEY,
  at              timestamptz NOT NULL DEFAULT now(),
  service_actor   text,
  user_id         uuid,
  username        text,
  user_role       text,
  operation       text NOT NULL,
  method          text NOT NULL,
  path            text NOT NULL,
  arguments       jsonb NOT NULL DEFAULT '{}'::jsonb,
  outcome         text NOT NULL CHECK (outcome IN ('success', 'denied', 'unauthorized', 'invalid', 'not_found', 'conflict', 'error', 'replayed')),
  status_code     integer NOT NULL,
  error_code      text,
  tool_call_id    text,
  conversation_id text,
  duration_ms     integer
);
CREATE INDEX IF NOT EXISTS audit_log_user ON audit_log (user_id, id DESC);
CREATE INDEX IF NOT EXISTS audit_log_operation ON audit_log (operation, id DESC);
CREATE INDEX IF NOT EXISTS audit_log_conversation ON audit_log (conversation_id, id DESC);

-- Side-effecting tool calls by Idempotency-Key (the tool_call_id), per user.
CREATE TABLE IF NOT EXISTS idempotency_keys (
  user_id      uuid NOT NULL,
  key          text NOT NULL,
  operation    text NOT NULL,
  request_hash text NOT NULL,
  status_code  integer NOT NULL,
  response     jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, key)
);
