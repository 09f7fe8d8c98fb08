-- Passkey step-up (issue 28 item 3). A policy rule with `step_up: "passkey"` makes each approver
-- sign the action's hash with a registered WebAuthn passkey when they approve.
-- The rule's step-up, kept on the approval as it opened (like its approvers, migration 150).
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS step_up text CHECK (step_up IN ('passkey'));

-- Each user's registered passkeys (ES256 only: the receipt carries the key as a P-256 JWK).
CREATE TABLE IF NOT EXISTS passkey_credentials (
  id          text PRIMARY KEY,            -- the credential id, base64url
  user_id     text NOT NULL,
  public_key  bytea NOT NULL,              -- COSE, as the authenticator gave it
  counter     bigint NOT NULL DEFAULT 0,
  transports  text[] NOT NULL DEFAULT '{}',
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);
CREATE INDEX IF NOT EXISTS passkey_credentials_user ON passkey_credentials (user_id);

-- Server-issued challenges: single use (deleted when used), short-lived, in the database so any
-- replica verifies what another issued. `approval_id` null: a registration's challenge.
CREATE TABLE IF NOT EXISTS passkey_challenges (
  nonce       text PRIMARY KEY,
  user_id     text NOT NULL,
  approval_id uuid REFERENCES approvals (id) ON DELETE CASCADE,
  challenge   text NOT NULL,
  expires_at  timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS passkey_challenges_expiry ON passkey_challenges (expires_at);

-- The approver's signature, recorded with their decision and copied into the receipt.
ALTER TABLE approval_decisions ADD COLUMN IF NOT EXISTS passkey jsonb;
