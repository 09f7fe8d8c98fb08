-- Approval receipts (issue 28 item 2): one compact JWS (ES256, the server's signing key) per decided
-- approval, written in the decision's transaction (server/approvals/receipt.ts) and served at
-- GET /api/agent/v1/approvals/{id}/receipt.
CREATE TABLE IF NOT EXISTS approval_receipts (
  approval_id text PRIMARY KEY,
  kid         text NOT NULL,
  receipt     text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
