-- Standing grants (issue 27 item 2): "allow this tool, with these exact argument values, for a while".
-- While one lives (not revoked, not expired), a matching call of its user (scope_user) or of anyone
-- in its tenant (scope_tenant) runs without an approval card; every use counts in `uses`. Revoking
-- sets revoked_at, read on every call, so it holds on the next one on every replica.
CREATE TABLE IF NOT EXISTS approval_grants (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tool         text NOT NULL,
  -- {argument: exact value}: a call matches when each named argument equals its value (canonical JSON).
  match        jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(match) = 'object'),
  created_by   uuid NOT NULL REFERENCES users(id),
  scope_user   uuid REFERENCES users(id),
  scope_tenant text,
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz,
  uses         integer NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL DEFAULT now(),
  CHECK ((scope_user IS NULL) <> (scope_tenant IS NULL))
);
CREATE INDEX IF NOT EXISTS approval_grants_live ON approval_grants (tool, expires_at) WHERE revoked_at IS NULL;
