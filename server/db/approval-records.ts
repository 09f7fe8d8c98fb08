/**
 * Approvals as the headless API shows them: the approval row with its requester's and decider's
 * tenant and username, and the headless run (if any) whose turn asked for it.
 * @module
 */
import type { ApprovalStatus } from './approvals.ts';
import type { Queryable } from './pool.ts';

export interface ApprovalRecord {
  id: string;
  conversationId: string;
  tool: string;
  args: Record<string, unknown>;
  prompt: string;
  status: ApprovalStatus;
  reason: string | null;
  decisionNote: string | null;
  createdAt: Date;
  expiresAt: Date;
  resolvedAt: Date | null;
  requestedBy: string;
  requesterTenant: string;
  requesterUsername: string;
  resolvedBy: string | null;
  resolverTenant: string | null;
  resolverUsername: string | null;
  policyScope: string;
  policyAction: string;
  policyMatched: boolean;
  runId: string | null;
}

interface Row {
  id: string;
  conversation_id: string;
  tool: string;
  args: Record<string, unknown>;
  prompt: string;
  status: ApprovalStatus;
  reason: string | null;
  decision_note: string | null;
  created_at: Date;
  expires_at: Date;
  resolved_at: Date | null;
  requested_by: string;
  requester_tenant: string;
  requester_username: string;
  resolved_by: string | null;
  resolver_tenant: string | null;
  resolver_username: string | null;
  policy_scope: string;
  policy_action: string;
  policy_matched: boolean;
  run_id: string | null;
}

const toRecord = (r: Row): ApprovalRecord => ({
  id: r.id,
  conversationId: r.conversation_id,
  tool: r.tool,
  args: r.args,
  prompt: r.prompt,
  status: r.status,
  reason: r.reason,
  decisionNote: r.decision_note,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  resolvedAt: r.resolved_at,
  requestedBy: r.requested_by,
  requesterTenant: r.requester_tenant,
  requesterUsername: r.requester_username,
  resolvedBy: r.resolved_by,
  resolverTenant: r.resolver_tenant,
  resolverUsername: r.resolver_username,
  policyScope: r.policy_scope,
  policyAction: r.policy_action,
  policyMatched: r.policy_matched,
  runId: r.run_id,
});

const SELECT = `
  SELECT a.id, a.conversation_id, a.tool, a.args, a.prompt, a.status, a.reason, a.decision_note, a.created_at, a.expires_at,
         a.resolved_at, a.requested_by, req.tenant AS requester_tenant, req.username AS requester_username,
         a.resolved_by, res.tenant AS resolver_tenant, res.username AS resolver_username,
         a.policy_scope, a.policy_action, a.policy_matched,
         (SELECT t.run_id FROM conversation_events e JOIN agent_run_turns t ON t.engine_run_id = e.run_id
           WHERE e.conversation_id = a.conversation_id AND e.kind = 'approval.requested' AND e.payload->>'approval_id' = a.id::text
           LIMIT 1) AS run_id
  FROM approvals a
  JOIN users req ON req.id::text = a.requested_by
  LEFT JOIN users res ON res.id::text = a.resolved_by`;

export async function getApprovalRecord(q: Queryable, id: string): Promise<ApprovalRecord | null> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
  const { rows } = await q.query<Row>(`${SELECT} WHERE a.id = $1`, [id]);
  return rows[0] ? toRecord(rows[0]) : null;
}

/** Approvals of a tenant, newest first: every user's when `userId` is null, else that requester's. */
export async function listApprovalRecords(q: Queryable, f: { tenant: string; userId: string | null; status: ApprovalStatus | null; limit: number }): Promise<ApprovalRecord[]> {
  const { rows } = await q.query<Row>(
    `${SELECT} WHERE req.tenant = $1 AND ($2::text IS NULL OR a.requested_by = $2) AND ($3::text IS NULL OR a.status = $3)
     ORDER BY a.created_at DESC, a.id DESC LIMIT $4`,
    [f.tenant, f.userId, f.status, f.limit],
  );
  return rows.map(toRecord);
}

/** Pending approvals past their expiry (one, or all), oldest first. */
export async function listDuePending(q: Queryable, approvalId: string | null, now: Date): Promise<Array<{ id: string; conversationId: string; requestedBy: string; expiresAt: Date }>> {
  const { rows } = await q.query<{ id: string; conversation_id: string; requested_by: string; expires_at: Date }>(
    `SELECT id, conversation_id, requested_by, expires_at FROM approvals
     WHERE status = 'pending' AND expires_at <= $2 AND ($1::uuid IS NULL OR id = $1) ORDER BY expires_at, id`,
    [approvalId, now],
  );
  return rows.map((r) => ({ id: r.id, conversationId: r.conversation_id, requestedBy: r.requested_by, expiresAt: r.expires_at }));
}
