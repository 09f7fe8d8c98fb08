/**
 * Pure decisions about approvals: what a confirm, a deny or a new message does to a pending one,
 * and the words a user sees. SQL keeps the atomic transition (db/approvals.ts).
 * @module
 */
import type { ApprovalDecision } from '../agent/index.ts';
import { hashJson } from '../canonical-json.ts';
import type { DecisionAction } from './types.ts';

export type ApprovalOutcome = 'approved' | 'denied' | 'expired';
/** The wire's `confirm_resolved.result`. */
export type ResolvedResult = 'confirmed' | 'denied' | 'expired';

/**
 * Why an approval was resolved, in v1's words: on the ledger's `approval.resolved`, the wire's
 * `confirm_resolved` and the stored card, so a client can tell "Denied" from "Denied (new message)".
 */
export const APPROVAL_REASONS = ['user_confirmed', 'user_denied', 'approval_timeout', 'superseded_by_new_message', 'state_changed'] as const;
export type ApprovalReason = (typeof APPROVAL_REASONS)[number];

export interface Resolution {
  outcome: ApprovalOutcome;
  result: ResolvedResult;
  reason: ApprovalReason;
  decision: ApprovalDecision;
}

/**
 * What resolving a pending approval means: past its expiry it is `expired` whatever was asked;
 * a new message (`action: null`) denies it as superseded, so the thread never breaks.
 */
export function resolvePendingApproval({ expiresAt, action, now }: { expiresAt: Date; action: DecisionAction | null; now: Date }): Resolution {
  if (now.getTime() >= expiresAt.getTime()) {
    return { outcome: 'expired', result: 'expired', reason: 'approval_timeout', decision: { approved: false, reason: 'expired' } };
  }
  if (action === 'confirm') return { outcome: 'approved', result: 'confirmed', reason: 'user_confirmed', decision: { approved: true } };
  if (action === 'deny') return { outcome: 'denied', result: 'denied', reason: 'user_denied', decision: { approved: false, reason: 'denied' } };
  return { outcome: 'denied', result: 'denied', reason: SUPERSEDED, decision: { approved: false, reason: 'superseded' } };
}

const SUPERSEDED: ApprovalReason = 'superseded_by_new_message';

/** The decision a stored resolution carries to the graph (rows decided in an earlier turn). */
export function decisionOf(row: { status: ApprovalOutcome; reason: string | null; preview?: { state_hash: string } | null; decisionNote?: string | null }): ApprovalDecision {
  // The previewed state's hash travels with an approval: the action runs only while it holds (issue 27).
  if (row.status === 'approved') return row.preview ? { approved: true, state_hash: row.preview.state_hash } : { approved: true };
  if (row.status === 'expired') return { approved: false, reason: 'expired' };
  if (row.reason === SUPERSEDED) return { approved: false, reason: 'superseded' };
  return row.decisionNote ? { approved: false, reason: 'denied', note: row.decisionNote } : { approved: false, reason: 'denied' };
}

/** A stable hash of the arguments (key order does not matter), stored with the approval. */
export const hashArgs = hashJson;

/** What an approval binds: this tool, with these arguments, asked by this user. */
export function actionHash(action: { tool: string; args: Record<string, unknown>; userId: string }): string {
  return hashJson({ tool: action.tool, args: action.args, user: action.userId });
}

export interface PendingRef {
  id: string;
  expiresAt: Date;
}

export type ApprovalSelection =
  | { ok: true; resolve: Array<{ id: string; resolution: Resolution }> }
  | { ok: false; code: 'APPROVAL_NOT_FOUND' | 'VALIDATION_ERROR'; message: string };

/**
 * Which pending approvals a turn resolves, and how. A new message (`action: null`) supersedes them
 * all. A decision resolves exactly one: the one `approvalId` names, or the only one pending (a bare
 * confirm with several pending names them instead of guessing). A batch shares its expiry, so past
 * it every pending approval expires together.
 */
export function selectApprovals(turn: { pending: PendingRef[]; action: DecisionAction | null; approvalId: string | null; now: Date }): ApprovalSelection {
  const resolve = (refs: PendingRef[]) => ({
    ok: true as const,
    resolve: refs.map((p) => ({ id: p.id, resolution: resolvePendingApproval({ expiresAt: p.expiresAt, action: turn.action, now: turn.now }) })),
  });
  if (!turn.action) return resolve(turn.pending);
  const target = turn.approvalId ? turn.pending.find((p) => p.id === turn.approvalId) : turn.pending.length === 1 ? turn.pending[0] : undefined;
  if (!target) {
    if (turn.approvalId || turn.pending.length === 0) return { ok: false, code: 'APPROVAL_NOT_FOUND', message: 'There is no such pending approval to answer.' };
    const ids = turn.pending.map((p) => p.id).join(', ');
    return { ok: false, code: 'VALIDATION_ERROR', message: `Several approvals are pending (${ids}); name the one you decide with approval_id.` };
  }
  if (turn.now.getTime() >= target.expiresAt.getTime()) return resolve(turn.pending.filter((p) => turn.now.getTime() >= p.expiresAt.getTime()));
  return resolve([target]);
}

export interface DecidedRef {
  interruptId: string;
  /** The approval's id: an approved call is told it (and the action hash it bound), issue 41. */
  approvalId?: string;
  decision: ApprovalDecision;
  actionHash: string | null;
  requestedBy: string;
  /** An approver's edit (the row's final_args and final_action_hash; issue 27 item 1); absent: none. */
  finalArgs?: Record<string, unknown> | null;
  finalActionHash?: string | null;
}

const MISMATCH: ApprovalDecision = { approved: false, reason: 'mismatch' };

/**
 * Pure: what an approved, edited call resumes with: `{approved: true, args}` while the final
 * arguments hash to the final action hash the approver approved, else refused as a mismatch. The
 * preview's state hash is not sent: it was read for the proposed call, not the edited one.
 */
export function editedDecision(d: DecidedRef, tool: string): ApprovalDecision {
  if (!d.decision.approved || (!d.finalArgs && !d.finalActionHash)) return d.decision;
  if (!d.finalArgs || !d.finalActionHash) return MISMATCH;
  return actionHash({ tool, args: d.finalArgs, userId: d.requestedBy }) === d.finalActionHash ? { approved: true, args: d.finalArgs } : MISMATCH;
}

/** Pure: an approved decision names its approval and the action hash that was approved (issue 41). */
function withApproval(decision: ApprovalDecision, d: DecidedRef): ApprovalDecision {
  if (!decision.approved || !d.approvalId) return decision;
  const hash = d.finalActionHash ?? d.actionHash;
  return { ...decision, approval_id: d.approvalId, ...(hash ? { action_hash: hash } : {}) };
}

/**
 * The resume map for the paused interrupts, or null while one of them is still undecided (the run
 * resumes when the whole batch is decided). An approval whose interrupt now shows a different action
 * than the one it bound (tool, arguments, user) is refused: a confirm never runs anything else. An
 * edited approval resumes with its final arguments, checked against its final action hash.
 */
export function resumeDecisions(
  paused: Array<{ interruptId: string; tool: string; args: Record<string, unknown> }>,
  decided: DecidedRef[],
): Record<string, ApprovalDecision> | null {
  const decisions: Record<string, ApprovalDecision> = {};
  for (const p of paused) {
    const d = decided.find((x) => x.interruptId === p.interruptId);
    if (!d) return null;
    const bound = d.actionHash === null || d.actionHash === actionHash({ tool: p.tool, args: p.args, userId: d.requestedBy });
    decisions[p.interruptId] = bound ? withApproval(editedDecision(d, p.tool), d) : MISMATCH;
  }
  return decisions;
}
