-- Identity: users, JWT signing keys, revoked tokens (logout), failed-login throttling.
CREATE TABLE IF NOT EXISTS users (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  username      text NOT NULL UNIQUE CHECK (username ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
  password_hash text NOT NULL,
  role          text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- One row per key; the newest active one signs, every row's public half verifies (rotation).
CREATE TABLE IF NOT EXISTS signing_keys (
  kid         text PRIMARY KEY,
  alg         text NOT NULL,
  public_jwk  jsonb NOT NULL,
  private_jwk jsonb NOT NULL,
  active      boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Logged-out tokens by jti until they would have expired anyway.
CREATE TABLE IF NOT EXISTS revoked_tokens (
  jti        text PRIMARY KEY,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS revoked_tokens_expires ON revoked_tokens (expires_at);

-- Failed logins per (username, address); a success deletes the row.
CREATE TABLE IF NOT EXISTS login_attempts (
  key              text PRIMARY KEY,
  failures         integer NOT NULL DEFAULT 0,
  first_failure_at timestamptz NOT NULL DEFAULT now(),
  locked_until     timestamptz
);
