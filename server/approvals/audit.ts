/**
 * The audit row of an approval decision (issue 11: who decides is audited, whichever way the
 * decision came). Written by decideApprovals in the transaction of the atomic `pending -> decided`
 * transition, the one step every decision passes: a /chat confirm or deny, an AG-UI resume, the
 * headless API's approve / deny, a new message superseding, the expiry timer. So exactly one row
 * per decision, committed with it. Refused attempts are audited by the service that refused them
 * (`refusedAttemptEntry`, written by the front door that refused them: approvals/service.ts `decide`
 * for v1, links and the inbox; decide.ts `precheckDecision` for /chat, AG-UI and MCP).
 * @module
 */
import type { Approval } from '../db/approvals.ts';
import { appendAudit, type AppendedAudit, type AuditEntry, type AuditOutcome } from '../db/audit.ts';
import type { Queryable } from '../db/index.ts';
import { editOf } from './edit.ts';
import { channelOf, type DecisionOrigin } from './types.ts';
import type { ResolvedResult } from './rules.ts';
import { isAirlockError } from '../errors.ts';

/** Gradio /chat sends no origin of its own. */
export const CHAT_ORIGIN: DecisionOrigin = { method: 'POST', path: '/chat' };
/** Expiry is decided by nobody: the timer, recorded as the service actor `system`. */
export const SYSTEM_ACTOR = 'system';

const OPERATION: Record<Exclude<Approval['status'], 'pending'>, string> = {
  approved: 'approval.approve',
  denied: 'approval.deny',
  expired: 'approval.expire',
};

export interface DecisionAudit {
  approval: Approval;
  /** `progress`: one approver's approval of an M-of-N approval that stays pending (issue 26). */
  result: ResolvedResult | 'progress';
  /** Approvals so far and needed, on an M-of-N approval's rows. */
  count?: { approved: number; required: number };
  /** Who decided (approvals.resolved_by): null for an expiry. */
  decider: { id: string; username: string; role: string } | null;
  note: string | null;
  origin: DecisionOrigin | undefined;
}

/** Pure: the audit entry of one decision. */
export function decisionAuditEntry(d: DecisionAudit): AuditEntry {
  // A partial approval is an approval like the last one: the same operation.
  const status = d.result === 'progress' ? 'approved' : (d.approval.status as Exclude<Approval['status'], 'pending'>);
  const origin = d.origin ?? CHAT_ORIGIN;
  return {
    serviceActor: d.decider ? (origin.serviceActor ?? null) : SYSTEM_ACTOR,
    userId: d.decider?.id ?? null,
    username: d.decider?.username ?? null,
    userRole: d.decider?.role ?? null,
    operation: OPERATION[status],
    method: origin.method,
    path: origin.path,
    arguments: {
      approval_id: d.approval.id,
      tool: d.approval.tool,
      result: d.result,
      resolution_reason: d.approval.reason,
      reason: d.note,
      requested_by: d.approval.requestedBy,
      decided_by: d.decider?.id ?? SYSTEM_ACTOR,
      // Which way it came (issue 26); an expiry came by none.
      channel: d.decider ? channelOf(origin) : null,
      ...(d.count ? { approved_count: d.count.approved, approvals_required: d.count.required } : {}),
      // An edited action (issue 27): what was asked, what runs, the RFC 6902 patch between them, both hashes.
      ...editAudit(d.approval),
    },
    outcome: 'success',
    statusCode: 200,
    errorCode: null,
    toolCallId: d.approval.toolCallId,
    conversationId: d.approval.conversationId,
    durationMs: null,
    policyAction: d.approval.policy.action,
    policyScope: d.approval.policy.scope,
    policyMatched: d.approval.policy.matched,
    requesterId: d.approval.requestedBy,
  };
}

/** Pure: an edited approval's part of its audit rows; nothing when it was not edited. */
function editAudit(approval: Approval): Record<string, unknown> {
  const edit = editOf(approval);
  if (!edit) return {};
  return { original_arguments: edit.original_args, edited_arguments: edit.args, patch: edit.patch, original_action_hash: edit.original_action_hash, action_hash: edit.action_hash };
}

/** Writes the decision's audit row in `db` (the decision's own transaction); its chain hash goes into the receipt. */
export async function auditDecision(db: Queryable, d: DecisionAudit): Promise<AppendedAudit> {
  const [row] = await appendAudit(db, [decisionAuditEntry(d)]);
  return row;
}

const REFUSAL_OUTCOMES: Record<number, AuditOutcome> = { 400: 'invalid', 401: 'unauthorized', 403: 'denied', 404: 'not_found', 409: 'conflict', 410: 'conflict' };

/** One refused decision attempt, as its front door saw it (CONTRACTS: every attempt has its own audit row). */
export interface RefusedAttempt {
  actor: { serviceActor: string | null; userId: string; username: string; role: string };
  approvalId: string;
  decision: 'approve' | 'deny';
  path: string;
  channel: string;
  reason: string | null;
  /** What the decider may see of the approval; null: only its id (one they may not see). */
  seen: { tool: string; requestedBy: string; conversationId: string } | null;
  error: unknown;
}

/** Pure: the audit row of a refused attempt: its status and code, and no more of the approval than the decider may see. */
export function refusedAttemptEntry(a: RefusedAttempt): AuditEntry {
  const status = isAirlockError(a.error) ? a.error.status : 500;
  return {
    serviceActor: a.actor.serviceActor,
    userId: a.actor.userId,
    username: a.actor.username,
    userRole: a.actor.role,
    operation: `approval.${a.decision}`,
    method: 'POST',
    path: a.path,
    arguments: { approval_id: a.approvalId, ...(a.seen ? { tool: a.seen.tool, requested_by: a.seen.requestedBy } : {}), reason: a.reason, channel: a.channel },
    outcome: REFUSAL_OUTCOMES[status] ?? 'error',
    statusCode: status,
    errorCode: isAirlockError(a.error) ? a.error.code : 'INTERNAL',
    toolCallId: null,
    conversationId: a.seen?.conversationId ?? null,
    durationMs: null,
  };
}
