-- Signed audit chain heads (issue 36 item 3). Every AUDIT_CHECKPOINT_S and at every export, each
-- tenant's chain head (audit_chain_heads) is signed with the checkpoint key, an Ed25519 key derived
-- from the key-encryption key and never stored here (server/audit/checkpoint-key.ts), and kept as a
-- compact JWS. `./airlock audit verify` requires the recomputed chain to reach each signed hash at
-- its last_id, so a writer who rewrites a row and every later hash is named. The columns beside the
-- JWS are its index only: checks read the signed claims.
CREATE TABLE IF NOT EXISTS audit_checkpoints (
  id         bigserial PRIMARY KEY,
  tenant     text NOT NULL,
  last_id    bigint NOT NULL,
  hash       text NOT NULL,
  jws        text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS audit_checkpoints_by_tenant ON audit_checkpoints (tenant, last_id DESC);

-- A checkpoint can go to the webhooks (`audit.checkpoint`, only to endpoints whose `events` name
-- it), so a copy lives outside Airlock: the outbox holds events that are no approval's.
ALTER TABLE approval_outbox ALTER COLUMN approval_id DROP NOT NULL;
ALTER TABLE approval_outbox DROP CONSTRAINT IF EXISTS approval_outbox_type_check;
ALTER TABLE approval_outbox ADD CONSTRAINT approval_outbox_type_check
  CHECK (type IN ('approval.requested', 'approval.progress', 'approval.decided', 'approval.expired', 'approval.escalated', 'audit.checkpoint'));
