-- Tool policy (issue 11): users get a tenant (the policy's tenant_rules; user_key = tenant:username),
-- and the decision that routed a call is kept with its approval and its audit row. Idempotent, so
-- it composes with any other migration adding the same columns.
ALTER TABLE users ADD COLUMN IF NOT EXISTS tenant text NOT NULL DEFAULT 'demo';

ALTER TABLE approvals ADD COLUMN IF NOT EXISTS policy_scope text;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS policy_action text;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS policy_matched boolean;

ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS policy_scope text;
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS policy_matched boolean;
