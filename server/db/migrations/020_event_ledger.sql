-- The conversation event ledger (issue 8): committed events per conversation with a gap-free seq,
-- and runs as rows with an owner process and a lease.

-- One row per conversation holding the last seq handed out. Incrementing it in the writer's
-- transaction locks the row until commit, so seqs are gap-free (a rollback takes its seq back)
-- and two writers of one conversation serialise.
CREATE TABLE IF NOT EXISTS conversation_event_heads (
  conversation_id uuid PRIMARY KEY,
  last_seq        bigint NOT NULL
);

CREATE TABLE IF NOT EXISTS conversation_events (
  conversation_id uuid NOT NULL,
  seq             bigint NOT NULL CHECK (seq > 0),
  run_id          uuid NOT NULL,
  kind            text NOT NULL,
  payload         jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, seq)
);
CREATE INDEX IF NOT EXISTS conversation_events_by_run ON conversation_events (run_id, seq);

CREATE TABLE IF NOT EXISTS runs (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  conversation_id  uuid NOT NULL,
  user_id          text NOT NULL,
  request_id       text NOT NULL,
  request_hash     text NOT NULL,
  owner            text NOT NULL,
  status           text NOT NULL DEFAULT 'running'
                   CHECK (status IN ('running', 'done', 'paused', 'failed', 'cancelled')),
  lease_expires_at timestamptz NOT NULL,
  started_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz,
  -- request_id is scoped to the user: a retried first message finds its run before a second
  -- conversation is created.
  UNIQUE (user_id, request_id)
);
CREATE INDEX IF NOT EXISTS runs_running ON runs (lease_expires_at) WHERE status = 'running';
