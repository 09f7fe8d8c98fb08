/**
 * Approvals as the headless API shows them: the approval row with its requester's and decider's
 * tenant and username, and the headless run (if any) whose turn asked for it.
 * @module
 */
import { approversOf, type Approval, type ApprovalStatus, type ApprovalTermsRow, type ApproverColumns } from './approvals.ts';
import { ESCALATED_ROLES_SQL } from './escalation.ts';
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
  /** Issue 27: the effect's preview (null: none), the arguments' labels, the approval it replaces. */
  preview: Approval['preview'];
  labels: Approval['labels'];
  replaces: string | null;
  /** Issue 27 item 1: the arguments as an approver edited them; null: as proposed. */
  finalArgs: Record<string, unknown> | null;
  /** The action hash as edited (null: not edited); `actionHash` below stays the proposed one. */
  finalActionHash: string | null;
  /** The grant an approval of it may make (null: not grantable), and the grant it made (migration 163). */
  grantOffer: Approval['grantOffer'];
  /** The rule such a grant is made under (migration 241); null: none (older rows offer none). */
  grantRule: Approval['grantRule'];
  grantId: string | null;
  runId: string | null;
  /** Who must approve, and how many (migration 150). */
  terms: ApprovalTermsRow;
  /** Whom it escalates to when nobody answered in time (its approvers too from then on); null: nobody. */
  escalate: Approval['escalate'];
  /** Every decision made on it so far, oldest first (approval_decisions). */
  decisions: Array<{ userId: string; user: string; decision: 'approve' | 'deny'; decidedAt: Date; channel: string }>;
  /** That run's session_id when the caller gave an alias (agent_runs.session_ref): answers echo it. */
  sessionRef: string | null;
  /** What an approver signs with a step-up (issue 28): the hash of {tool, args, user}. */
  actionHash: string | null;
  /** Each approver must sign with a passkey (migration 175); null: no step-up. */
  stepUp: Approval['stepUp'];
  /**
   * The requester's last message before it opened, at most 500 characters (issue 37 item 4): other
   * approvers read it in the inbox row instead of opening a conversation that is not theirs.
   */
  requestMessage: string | null;
}

interface Row extends ApproverColumns {
  final_args: Record<string, unknown> | null;
  final_action_hash: string | null;
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
  preview: Approval['preview'];
  labels: Approval['labels'] | null;
  replaces: string | null;
  grant_offer: Approval['grantOffer'];
  grant_rule: Approval['grantRule'];
  grant_id: string | null;
  run_id: string | null;
  decisions: Array<{ user_id: string; user: string | null; decision: 'approve' | 'deny'; decided_at: string; channel: string }>;
  session_ref: string | null;
  action_hash: string | null;
  step_up: Approval['stepUp'];
  request_message: string | null;
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
  preview: r.preview ?? null,
  labels: r.labels ?? {},
  replaces: r.replaces ?? null,
  finalArgs: r.final_args ?? null,
  finalActionHash: r.final_action_hash,
  grantOffer: r.grant_offer ?? null,
  grantRule: r.grant_rule ?? null,
  grantId: r.grant_id ?? null,
  runId: r.run_id,
  ...approversOf(r),
  decisions: r.decisions.map((d) => ({ userId: d.user_id, user: d.user ?? '', decision: d.decision, decidedAt: new Date(d.decided_at), channel: d.channel })),
  sessionRef: r.session_ref,
  actionHash: r.action_hash,
  stepUp: r.step_up ?? null,
  requestMessage: r.request_message ?? null,
});

const SELECT = `
  SELECT a.id, a.conversation_id, a.tool, a.args, a.prompt, a.status, a.reason, a.decision_note, a.created_at, a.expires_at,
         a.resolved_at, a.requested_by, req.tenant AS requester_tenant, req.username AS requester_username,
         a.resolved_by, res.tenant AS resolver_tenant, res.username AS resolver_username,
         a.policy_scope, a.policy_action, a.policy_matched, a.preview, a.labels, a.replaces, a.grant_offer, a.grant_rule, a.grant_id, a.final_args, a.final_action_hash, run.run_id, run.session_ref,
         a.approvals_required, a.approver_roles, a.approver_users, a.distinct_from_requester, a.escalate_after_s, a.escalate_roles, a.action_hash, a.step_up,
         (SELECT coalesce(json_agg(json_build_object('user_id', d.user_id, 'user', du.username, 'decision', d.decision, 'decided_at', d.decided_at, 'channel', d.channel)
                   ORDER BY d.decided_at, d.user_id), '[]'::json)
           FROM approval_decisions d LEFT JOIN users du ON du.id::text = d.user_id WHERE d.approval_id = a.id) AS decisions,
         (SELECT left(m.content, 500) FROM messages m WHERE m.conversation_id = a.conversation_id AND m.role = 'user' AND m.created_at <= a.created_at
           ORDER BY m.seq DESC LIMIT 1) AS request_message
  FROM approvals a
  JOIN users req ON req.id::text = a.requested_by
  LEFT JOIN users res ON res.id::text = a.resolved_by
  LEFT JOIN LATERAL (
    SELECT t.run_id, r.session_ref FROM conversation_events e
      JOIN agent_run_turns t ON t.engine_run_id = e.run_id JOIN agent_runs r ON r.id = t.run_id
     WHERE e.conversation_id = a.conversation_id AND e.kind = 'approval.requested' AND e.payload->>'approval_id' = a.id::text
     LIMIT 1) run ON true`;

export async function getApprovalRecord(q: Queryable, id: string): Promise<ApprovalRecord | null> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
  const { rows } = await q.query<Row>(`${SELECT} WHERE a.id = $1`, [id]);
  return rows[0] ? toRecord(rows[0]) : null;
}

/** Whose approvals a list shows: a tenant's, and of it every user's (`userId` null) or one viewer's. */
export interface ApprovalViewer {
  tenant: string;
  userId: string | null;
  approver?: { username: string; role: string };
}

/**
 * Approvals of a tenant, newest first: every user's when `userId` is null, else that requester's
 * and those the policy routes to `approver` (by username or role, or by role once escalated, issue 26); of one conversation
 * when `conversationId` is set. `approvalVisibleTo` is the same rule in memory.
 */
export async function listApprovalRecords(
  q: Queryable,
  f: ApprovalViewer & { status: ApprovalStatus | null; limit: number; conversationId?: string | null },
): Promise<ApprovalRecord[]> {
  const { rows } = await q.query<Row>(
    `${SELECT} WHERE req.tenant = $1 AND ($2::text IS NULL OR a.requested_by = $2 OR $5 = ANY(a.approver_users) OR $6 = ANY(a.approver_roles) OR $6 = ANY(${ESCALATED_ROLES_SQL}))
       AND ($3::text IS NULL OR a.status = $3) AND ($7::uuid IS NULL OR a.conversation_id = $7)
     ORDER BY a.created_at DESC, a.id DESC LIMIT $4`,
    [f.tenant, f.userId, f.status, f.limit, f.approver?.username ?? null, f.approver?.role ?? null, f.conversationId ?? null],
  );
  return rows.map(toRecord);
}

/**
 * Pure: listApprovalRecords' visibility rule for one record at `now` (escalated roles count once
 * `escalate.after_s` passed, as ESCALATED_ROLES_SQL says). The approvals streams read a tenant's list
 * once and filter it per viewer with this (v1/approvals-hub.ts); a test holds the two equal.
 */
export function approvalVisibleTo(r: ApprovalRecord, v: ApprovalViewer, now: Date): boolean {
  if (r.requesterTenant !== v.tenant) return false;
  if (v.userId === null || r.requestedBy === v.userId) return true;
  const a = v.approver;
  if (!a) return false;
  if (r.terms.users.includes(a.username) || r.terms.roles.includes(a.role)) return true;
  const e = r.escalate;
  return e !== null && r.createdAt.getTime() + e.afterS * 1000 <= now.getTime() && e.roles.includes(a.role);
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
