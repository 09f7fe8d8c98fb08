/**
 * SQL: the roles an approval (alias `a`) has escalated to by now: its rule's `escalate.roles` once
 * `escalate_after_s` passed since it opened, else none. The same moment as `termsAt`
 * (approvals/approvers.ts), for the queries that filter by it: the inbox, a notification's links.
 * @module
 */
export const ESCALATED_ROLES_SQL = `(CASE WHEN a.escalate_after_s IS NOT NULL AND a.created_at + a.escalate_after_s * interval '1 second' <= now()
  THEN coalesce(a.escalate_roles, '{}'::text[]) ELSE '{}'::text[] END)`;
