-- Approvals from anywhere (issue 26): an approval may need several approvers (M-of-N). Each
-- approval keeps the terms its policy rule set when it opened, and every decision made on it is a
-- row of approval_decisions: who, approve or deny, when, by which channel. One row per approver
-- (the key), so nobody counts twice; the terminal transition of approvals stays the one atomic
-- pending -> decided UPDATE, made by the decision that reaches the count (or any denial).
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS approvals_required integer NOT NULL DEFAULT 1 CHECK (approvals_required >= 1);
-- Empty roles and users: the default approvers (the requester and the tenant's admins).
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS approver_roles text[] NOT NULL DEFAULT '{}';
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS approver_users text[] NOT NULL DEFAULT '{}';
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS distinct_from_requester boolean NOT NULL DEFAULT false;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS escalate_after_s integer;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS escalate_roles text[];

CREATE TABLE IF NOT EXISTS approval_decisions (
  approval_id uuid NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
  user_id     text NOT NULL,
  decision    text NOT NULL CHECK (decision IN ('approve', 'deny')),
  decided_at  timestamptz NOT NULL,
  channel     text NOT NULL CHECK (channel IN ('link', 'inbox', 'chat', 'v1', 'ag-ui', 'mcp')),
  note        text,
  PRIMARY KEY (approval_id, user_id)
);
