-- Real people (issue 39): what single sign-on and an admin's user management need on users.
-- A person is (issuer, subject), never an email: local users have neither, SSO (oidc) and
-- authenticating-proxy (proxy) users both, unique together. Usernames may now hold '@' (an
-- email-shaped claim); SSO and proxy users have no password (password login refuses them).
-- disabled_at switches a person off (read with every token, in loadTokenSubject's one query);
-- role_from_claims says the role is the provider's groups' (OIDC_ROLE_MAP), so an admin may not change it.
ALTER TABLE users DROP CONSTRAINT IF EXISTS users_username_check;
ALTER TABLE users ADD CONSTRAINT users_username_check CHECK (username ~ '^[a-z0-9][a-z0-9._@-]{0,63}$');
ALTER TABLE users ALTER COLUMN password_hash DROP NOT NULL;
ALTER TABLE users
  ADD COLUMN IF NOT EXISTS source text NOT NULL DEFAULT 'local' CHECK (source IN ('local', 'oidc', 'proxy')),
  ADD COLUMN IF NOT EXISTS issuer text,
  ADD COLUMN IF NOT EXISTS subject text,
  ADD COLUMN IF NOT EXISTS email text,
  ADD COLUMN IF NOT EXISTS display_name text,
  ADD COLUMN IF NOT EXISTS role_from_claims boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS disabled_at timestamptz,
  ADD COLUMN IF NOT EXISTS last_sign_in_at timestamptz;
ALTER TABLE users ADD CONSTRAINT users_identity_by_source
  CHECK ((source = 'local') = (issuer IS NULL AND subject IS NULL));
CREATE UNIQUE INDEX IF NOT EXISTS users_issuer_subject ON users (issuer, subject) WHERE issuer IS NOT NULL;
