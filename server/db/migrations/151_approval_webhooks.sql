-- Out-of-band approval notifications (issue 26 item 3). Each approval transition that notifies
-- writes one outbox event in its own transaction (so a notification exists exactly when the
-- transition committed), with a snapshot of the approval as it was then. The delivery worker (one
-- replica at a time: an advisory lock) expands each event into one delivery per configured
-- endpoint and posts it with retries and backoff; a restart loses nothing.
CREATE TABLE IF NOT EXISTS approval_outbox (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  type        text NOT NULL CHECK (type IN ('approval.requested', 'approval.progress', 'approval.decided', 'approval.expired', 'approval.escalated')),
  approval_id uuid NOT NULL,
  snapshot    jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expanded    boolean NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS approval_outbox_unexpanded ON approval_outbox (created_at) WHERE NOT expanded;

CREATE TABLE IF NOT EXISTS approval_webhook_deliveries (
  event_id     uuid NOT NULL REFERENCES approval_outbox (id) ON DELETE CASCADE,
  url          text NOT NULL,
  status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts     integer NOT NULL DEFAULT 0,
  next_at      timestamptz NOT NULL DEFAULT now(),
  last_error   text,
  delivered_at timestamptz,
  PRIMARY KEY (event_id, url)
);
CREATE INDEX IF NOT EXISTS approval_webhook_deliveries_due ON approval_webhook_deliveries (next_at) WHERE status = 'pending';
