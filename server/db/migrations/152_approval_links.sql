-- Signed one-use decision links (issue 26 item 4): /approve/{token}. Only the token's SHA-256 is
-- stored. A link is bound to one approval, one approver, the action hash the approver is shown,
-- and an expiry no later than the approval's; it is consumed (used_at) in the decision's own
-- transaction, never by a GET.
CREATE TABLE IF NOT EXISTS approval_links (
  token_hash  text PRIMARY KEY,
  approval_id uuid NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
  user_id     text NOT NULL,
  action_hash text NOT NULL,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS approval_links_by_approval ON approval_links (approval_id);
