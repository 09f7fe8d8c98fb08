-- The action the gateway's tool policy took for a call (allow, caution, require_approval, deny), so an
-- audit row tells an allowed call from an approved one. Written for MCP calls; null for api rows.
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS policy_action text;
