-- Tenants (issue 11): every user belongs to one; the headless API's user_key is `tenant:username`
-- and a caller never sees another tenant's runs or approvals. The only users this project creates
-- are the demo users, whose tenant is `demo`; other tenants are set by whoever adds users.
ALTER TABLE users ADD COLUMN IF NOT EXISTS tenant text NOT NULL DEFAULT 'demo'
  CHECK (tenant ~ '^[a-z0-9][a-z0-9._-]{0,63}$');
