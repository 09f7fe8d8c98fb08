-- Tool policy (issue 11): users get a tenant (the policy's tenant_rules; user_key = tenant:username),
-- and the decision that routed a call is kept with its approval and its audit row. Idempotent, and
-- in the same shape as the headless API's migration (which may add the same columns first):
-- approvals from before a policy existed were today's rule, a built-in require_approval.
ALTER TABLE users ADD COLUMN IF NOT EXISTS tenant text NOT NULL DEFAULT 'demo';

ALTER TABLE approvals ADD COLUMN IF NOT EXISTS policy_scope text NOT NULL DEFAULT 'builtin';
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS policy_action text NOT NULL DEFAULT 'require_approval';
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS policy_matched boolean NOT NULL DEFAULT false;

-- Null on rows no policy routed (api reads and writes outside the agent, and rows from before).
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS policy_scope text;
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS policy_matched boolean;
