-- Single sign-on flows (issue 39): the `state` of each finished sign-in, until its flow cookie
-- would have expired anyway, so a flow cookie and its code finish once, on any replica.
CREATE TABLE IF NOT EXISTS oidc_flows_used (
  state      text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS oidc_flows_used_expires ON oidc_flows_used (expires_at);
