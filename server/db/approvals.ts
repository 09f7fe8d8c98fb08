/**
 * The approvals table. The pending -> approved|denied|expired transition is one conditional UPDATE,
 * so a double confirm resolves (and resumes) once.
 * @module
 */
import type { Queryable } from './pool.ts';

/** The stored preview: operations' EffectPreview as a column (db sits below operations). */
type EffectPreview = { summary: string; details?: Record<string, unknown>; state_hash: string };
type ArgumentLabels = Record<string, string>;
/** What an approval offers besides Confirm (policy's GrantOffer, as a column). */
type GrantOffer = { max_ttl_s: number; match: Record<string, unknown> };
/** The rule a grant would be made under (policy's GrantRule, as a column; migration 241). */
type GrantRule = { hash: string; scoped: boolean };

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired';

export interface Approval {
  id: string;
  conversationId: string;
  threadId: string;
  interruptId: string;
  toolCallId: string;
  tool: string;
  args: Record<string, unknown>;
  argsHash: string;
  /** Hash of tool + arguments + requesting user (null on rows older than migration 011). */
  actionHash: string | null;
  prompt: string;
  requestedBy: string;
  status: ApprovalStatus;
  reason: string | null;
  createdAt: Date;
  expiresAt: Date;
  resolvedAt: Date | null;
  /** Who decided: the requester, or a user with approvals:decide; null while pending or expired. */
  resolvedBy: string | null;
  /** When the graph consumed the decision; null while pending or decided but not yet resumed. */
  resumedAt: Date | null;
  /** The tool policy decision that paused the call (migration 110; older rows: builtin require_approval). */
  policy: { scope: string; action: string; matched: boolean };
  /** Who must approve, and how many (migration 150; older rows: one, the requester or an admin). */
  terms: ApprovalTermsRow;
  /** Whom to notify when nobody answered in time (migration 150); null: nobody. */
  escalate: { afterS: number; roles: string[] } | null;
  /** The effect's preview the approver sees (migration 161); null: none. */
  preview: EffectPreview | null;
  /** Human labels of the arguments; {} on older rows. */
  labels: ArgumentLabels;
  /** The approval of the same tool call that a state change closed, when this one asks again. */
  replaces: string | null;
  /** The decider's own words (a Deny reason), told to the model (issue 27 item 4). */
  decisionNote: string | null;
  /** The arguments as an approver edited them (migration 164; issue 27 item 1); null: not edited. */
  finalArgs: Record<string, unknown> | null;
  /** The action hash of the edited call (tool + finalArgs + requester); null: not edited. */
  finalActionHash: string | null;
  /** The grant its approver may make instead of a one-off confirm (migration 163); null: not grantable. */
  grantOffer: GrantOffer | null;
  /** The rule a grant of it is made under (migration 241, issue 36); null with no offer, and on older rows (no grant then). */
  grantRule: GrantRule | null;
  /** The grant its approval made; null: a one-off decision. */
  grantId: string | null;
  /** The W3C traceparent of the turn that paused (migration 172; server/telemetry); null when traces were off. */
  traceParent: string | null;
  /** The rule asks each approver to sign with a passkey (migration 175, issue 28); null: no step-up. */
  stepUp: 'passkey' | null;
}

/** The approvers an approval needs (approvals/approvers.ts reads them). */
/** The approver columns of an approvals row (who decides, and whom it escalates to), as every reader selects them. */
export interface ApproverColumns {
  approvals_required: number;
  approver_roles: string[];
  approver_users: string[];
  distinct_from_requester: boolean;
  escalate_after_s: number | null;
  escalate_roles: string[] | null;
}

/** Pure: an approvals row's approver columns as the row's `terms` and `escalate`. */
export function approversOf(row: ApproverColumns): { terms: ApprovalTermsRow; escalate: { afterS: number; roles: string[] } | null } {
  return {
    terms: { required: row.approvals_required, roles: row.approver_roles, users: row.approver_users, distinctFromRequester: row.distinct_from_requester },
    escalate: row.escalate_after_s ? { afterS: row.escalate_after_s, roles: row.escalate_roles ?? [] } : null,
  };
}

export interface ApprovalTermsRow {
  required: number;
  roles: string[];
  users: string[];
  distinctFromRequester: boolean;
}

interface ApprovalRow extends ApproverColumns {
  id: string;
  conversation_id: string;
  thread_id: string;
  interrupt_id: string;
  tool_call_id: string;
  tool: string;
  args: Record<string, unknown>;
  args_hash: string;
  action_hash: string | null;
  prompt: string;
  requested_by: string;
  status: ApprovalStatus;
  reason: string | null;
  created_at: Date;
  expires_at: Date;
  resolved_at: Date | null;
  resolved_by: string | null;
  resumed_at: Date | null;
  policy_scope: string;
  policy_action: string;
  policy_matched: boolean;
  preview: EffectPreview | null;
  labels: ArgumentLabels | null;
  replaces: string | null;
  decision_note: string | null;
  final_args: Record<string, unknown> | null;
  final_action_hash: string | null;
  grant_offer: GrantOffer | null;
  grant_rule: GrantRule | null;
  grant_id: string | null;
  trace_parent: string | null;
  step_up: 'passkey' | null;
}

function toApproval(row: ApprovalRow): Approval {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    threadId: row.thread_id,
    interruptId: row.interrupt_id,
    toolCallId: row.tool_call_id,
    tool: row.tool,
    args: row.args,
    argsHash: row.args_hash,
    actionHash: row.action_hash,
    prompt: row.prompt,
    requestedBy: row.requested_by,
    status: row.status,
    reason: row.reason,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    resolvedAt: row.resolved_at,
    resolvedBy: row.resolved_by ?? null,
    resumedAt: row.resumed_at,
    policy: { scope: row.policy_scope, action: row.policy_action, matched: row.policy_matched },
    ...approversOf(row),
    preview: row.preview ?? null,
    labels: row.labels ?? {},
    replaces: row.replaces ?? null,
    decisionNote: row.decision_note ?? null,
    finalArgs: row.final_args ?? null,
    finalActionHash: row.final_action_hash ?? null,
    grantOffer: row.grant_offer ?? null,
    grantRule: row.grant_rule ?? null,
    grantId: row.grant_id ?? null,
    traceParent: row.trace_parent ?? null,
    stepUp: row.step_up ?? null,
  };
}

export type NewApproval = Pick<
  Approval,
  'conversationId' | 'threadId' | 'interruptId' | 'toolCallId' | 'tool' | 'args' | 'argsHash' | 'prompt' | 'requestedBy' | 'expiresAt'
> & { actionHash: string; policy?: { scope: string; action: string; matched: boolean } | null; terms?: ApprovalTermsRow | null; escalate?: { afterS: number; roles: string[] } | null;
  preview?: EffectPreview | null; labels?: ArgumentLabels; replaces?: string | null; grantOffer?: GrantOffer | null; grantRule?: GrantRule | null; traceParent?: string | null; stepUp?: 'passkey' | null };

/** Records a pending approval; a repeat for the same interrupt returns the existing row. */
export async function createApproval(q: Queryable, a: NewApproval): Promise<Approval> {
  const { rows } = await q.query<ApprovalRow>(
    `INSERT INTO approvals (conversation_id, thread_id, interrupt_id, tool_call_id, tool, args, args_hash, prompt, requested_by, expires_at, action_hash,
       policy_scope, policy_action, policy_matched, approvals_required, approver_roles, approver_users, distinct_from_requester, escalate_after_s, escalate_roles,
       preview, labels, replaces, grant_offer, trace_parent, step_up, grant_rule)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, COALESCE($12, 'builtin'), COALESCE($13, 'require_approval'), COALESCE($14, false),
       COALESCE($15, 1), COALESCE($16, '{}'::text[]), COALESCE($17, '{}'::text[]), COALESCE($18, false), $19, $20, $21, $22, $23, $24, $25, $26, $27)
     ON CONFLICT (thread_id, interrupt_id) DO UPDATE SET thread_id = EXCLUDED.thread_id
     RETURNING *`,
    [a.conversationId, a.threadId, a.interruptId, a.toolCallId, a.tool, JSON.stringify(a.args), a.argsHash, a.prompt, a.requestedBy, a.expiresAt, a.actionHash,
      a.policy?.scope ?? null, a.policy?.action ?? null, a.policy?.matched ?? null,
      a.terms?.required ?? null, a.terms?.roles ?? null, a.terms?.users ?? null, a.terms?.distinctFromRequester ?? null, a.escalate?.afterS ?? null, a.escalate?.roles ?? null,
      a.preview ? JSON.stringify(a.preview) : null, a.labels ? JSON.stringify(a.labels) : null, a.replaces ?? null, a.grantOffer ? JSON.stringify(a.grantOffer) : null, a.traceParent ?? null, a.stepUp ?? null, a.grantOffer && a.grantRule ? JSON.stringify(a.grantRule) : null],
  );
  return toApproval(rows[0]);
}

/** Links the grant an approval made (issue 27), in the decision's transaction. */
export async function linkGrant(q: Queryable, approvalId: string, grantId: string): Promise<void> {
  await q.query(`UPDATE approvals SET grant_id = $2 WHERE id = $1`, [approvalId, grantId]);
}

/** Pending approvals of a conversation, oldest first. */
export async function listPendingApprovals(q: Queryable, conversationId: string): Promise<Approval[]> {
  const { rows } = await q.query<ApprovalRow>(
    `SELECT * FROM approvals WHERE conversation_id = $1 AND status = 'pending' ORDER BY created_at, id`,
    [conversationId],
  );
  return rows.map(toApproval);
}

/** Who decided an approval, as the audit records them. */
export interface Decider {
  id: string;
  username: string;
  role: string;
}

/**
 * Atomically moves one pending approval requested by `userId` to `status`. Returns the updated row
 * with who decided (read in the same statement, for the decision's audit row), or null when it was
 * not pending any more (already resolved by a concurrent request) or not theirs.
 */
export async function resolveApproval(
  q: Queryable,
  r: { id: string; userId: string; status: Exclude<ApprovalStatus, 'pending'>; reason: string; now: Date; decidedBy?: string | null; note?: string | null },
): Promise<(Approval & { decider: Decider | null }) | null> {
  // resolved_by: who decided (the requester, or a user with approvals:decide via the headless API);
  // an expiry is decided by nobody.
  const { rows } = await q.query<ApprovalRow & { decider_username: string | null; decider_role: string | null }>(
    `WITH resolved AS (
       UPDATE approvals SET status = $3, reason = $4, resolved_at = $5,
         resolved_by = CASE WHEN $3 = 'expired' THEN NULL ELSE COALESCE($6, $2) END, decision_note = $7
       WHERE id = $1 AND requested_by = $2 AND status = 'pending'
       RETURNING *)
     SELECT resolved.*, u.username AS decider_username, u.role AS decider_role
     FROM resolved LEFT JOIN users u ON u.id = resolved.resolved_by::uuid`,
    [r.id, r.userId, r.status, r.reason, r.now, r.decidedBy ?? null, r.note ?? null],
  );
  const row = rows[0];
  if (!row) return null;
  const decider = row.resolved_by ? { id: row.resolved_by, username: row.decider_username ?? '', role: row.decider_role ?? '' } : null;
  return { ...toApproval(row), decider };
}

/**
 * Decided approvals whose run has not continued yet, of one thread (or of every thread), oldest
 * first: the decisions a resume still owes the graph.
 */
export async function listDecidedNotResumed(q: Queryable, threadId?: string): Promise<Approval[]> {
  const { rows } = await q.query<ApprovalRow>(
    `SELECT * FROM approvals WHERE status <> 'pending' AND resumed_at IS NULL AND ($1::text IS NULL OR thread_id = $1)
     ORDER BY created_at, id`,
    [threadId ?? null],
  );
  return rows.map(toApproval);
}

/**
 * A conversation's approvals not yet consumed by the graph: the pending ones and those decided but
 * not resumed, in one round trip (what a turn looks at before its first token).
 */
export async function listUnresumedApprovals(q: Queryable, conversationId: string): Promise<Approval[]> {
  const { rows } = await q.query<ApprovalRow>(
    `SELECT * FROM approvals WHERE conversation_id = $1 AND resumed_at IS NULL ORDER BY created_at, id`,
    [conversationId],
  );
  return rows.map(toApproval);
}

/** The conversation's approval `id`, or (no id) its latest one; null when there is none. */
export async function findApproval(q: Queryable, conversationId: string, id?: string | null): Promise<Approval | null> {
  const { rows } = await q.query<ApprovalRow>(
    `SELECT * FROM approvals WHERE conversation_id = $1 AND ($2::uuid IS NULL OR id = $2::uuid) ORDER BY created_at DESC, id DESC LIMIT 1`,
    [conversationId, id ?? null],
  );
  return rows[0] ? toApproval(rows[0]) : null;
}

/** Marks decisions as consumed by the graph (the resume that carried them got past the pause). */
export async function markResumed(q: Queryable, ids: string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await q.query(`UPDATE approvals SET resumed_at = $2 WHERE id = ANY($1::uuid[]) AND resumed_at IS NULL`, [ids, now]);
}

/**
 * Closes the approval of `toolCallId` that was approved but whose action was refused because the
 * state it previewed changed (412): denied / state_changed. Returns its id, or null when there is
 * none (the new approval is then a plain one).
 */
export async function closeStateChanged(q: Queryable, input: { threadId: string; toolCallId: string; exceptId: string }): Promise<string | null> {
  const { rows } = await q.query<{ id: string }>(
    `UPDATE approvals SET status = 'denied', reason = 'state_changed'
     WHERE id = (SELECT id FROM approvals WHERE thread_id = $1 AND tool_call_id = $2 AND status = 'approved' AND id <> $3
                 ORDER BY created_at DESC, id DESC LIMIT 1)
     RETURNING id`,
    [input.threadId, input.toolCallId, input.exceptId],
  );
  return rows[0]?.id ?? null;
}

/** Records which approval a new one replaces (the card links them). */
export async function linkReplaced(q: Queryable, id: string, replaces: string): Promise<void> {
  await q.query('UPDATE approvals SET replaces = $2 WHERE id = $1', [id, replaces]);
}

/**
 * Records an approver's edit of a pending approval (issue 27 item 1), under its row lock: the final
 * arguments, their action hash and every term the edited call's rule sets (issue 36: approvers,
 * escalation, step-up, the expiry brought forward); an edited approval offers no grant (its offer
 * was for the call as proposed). The proposed `args` and `action_hash` stay: they bind the paused interrupt.
 */
export async function recordEdit(
  q: Queryable,
  e: { id: string; finalArgs: Record<string, unknown>; finalActionHash: string; terms: ApprovalTermsRow; escalate: Approval['escalate']; stepUp: Approval['stepUp']; expiresAt: Date },
): Promise<Approval> {
  const { rows } = await q.query<ApprovalRow>(
    `UPDATE approvals SET final_args = $2, final_action_hash = $3, approvals_required = $4, approver_roles = $5, approver_users = $6, distinct_from_requester = $7,
       escalate_after_s = $8, escalate_roles = $9, step_up = $10, expires_at = LEAST(expires_at, $11), grant_offer = NULL, grant_rule = NULL
     WHERE id = $1 AND status = 'pending' RETURNING *`,
    [e.id, JSON.stringify(e.finalArgs), e.finalActionHash, e.terms.required, e.terms.roles, e.terms.users, e.terms.distinctFromRequester,
      e.escalate?.afterS ?? null, e.escalate?.roles ?? null, e.stepUp, e.expiresAt],
  );
  if (!rows[0]) throw new Error(`approval ${e.id} is not pending: an edit is recorded under its row lock`);
  return toApproval(rows[0]);
}
