-- A dry run (`?dry_run=true`, issue 27 item 3) is audited as its own outcome, `preview`: it passed
-- the same RBAC as the call and did nothing. It is never stored as idempotent.
ALTER TABLE audit_log DROP CONSTRAINT IF EXISTS audit_log_outcome_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_outcome_check
  CHECK (outcome IN ('success', 'denied', 'unauthorized', 'invalid', 'not_found', 'conflict', 'error', 'replayed', 'preview'));
