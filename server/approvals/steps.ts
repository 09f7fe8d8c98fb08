/**
 * The approval steps of a /chat turn: resolving what the turn decides (atomically, once), working
 * out the resume the thread is owed, and opening approvals when the agent pauses. Decisions are in
 * rules.ts; SQL in db/approvals.ts.
 * @module
 */
import type { AgentRuntime, ApprovalDecision, PendingApproval } from '../agent/index.ts';
import { createApproval, listDecidedNotResumed, listPendingApprovals, markResumed, resolveApproval, type Approval } from '../db/approvals.ts';
import type { Queryable } from '../db/index.ts';
import { AirlockError } from '../errors.ts';
import { approvalPrompt } from '../operations/index.ts';
import type { PolicyStamp } from '../policy/index.ts';
import { auditDecision } from './audit.ts';
import { actionHash, decisionOf, hashArgs, resumeDecisions, selectApprovals, type ApprovalReason, type ResolvedResult } from './rules.ts';
import type { DecisionOrigin, TurnAction } from './types.ts';

export interface ResolvedApproval {
  approvalId: string;
  result: ResolvedResult;
  reason: ApprovalReason;
  /** The row as the decision left it. */
  approval: Approval;
}

/**
 * Resolves the pending approvals this turn decides: all of them for a new message (superseded),
 * exactly one for a confirm or deny. Approvals a concurrent request resolved first are skipped.
 * Each decision writes its audit row (audit.ts) in `db`, the decision's transaction.
 * A decision with nothing pending resolves nothing: the caller may still owe a resume.
 */
export async function decideApprovals(
  db: Queryable,
  turn: { conversationId: string; userId: string; action: TurnAction | null; approvalId: string | null; now: () => Date; decidedBy?: string | null; note?: string | null; origin?: DecisionOrigin },
  /**
   * The conversation's pending approvals when the caller has just read them under the conversation
   * lease (no new pause can open meanwhile; one a concurrent request resolved is skipped below).
   */
  known?: Approval[],
): Promise<ResolvedApproval[]> {
  const pending = known ?? (await listPendingApprovals(db, turn.conversationId));
  if (turn.action && pending.length === 0) return [];
  const selection = selectApprovals({ pending, action: turn.action, approvalId: turn.approvalId, now: turn.now() });
  if (!selection.ok) throw new AirlockError(selection.code, selection.message);
  const resolved: ResolvedApproval[] = [];
  for (const { id, resolution } of selection.resolve) {
    const row = await resolveApproval(db, { id, userId: turn.userId, status: resolution.outcome, reason: resolution.reason, now: turn.now(), decidedBy: turn.decidedBy, note: turn.note });
    if (!row) continue;
    // Audited here, in the decision's transaction: the one step every decision passes.
    await auditDecision(db, { approval: row, result: resolution.result, decider: row.decider, note: turn.note ?? null, origin: turn.origin });
    resolved.push({ approvalId: row.id, result: resolution.result, reason: resolution.reason, approval: row });
  }
  return resolved;
}

export interface OwedResume {
  decisions: Record<string, ApprovalDecision>;
  /** The approval rows the resume consumes (marked resumed once the graph is past the pause). */
  approvalIds: string[];
  /** True when at least one decision lets an action run (a confirmed action must never be dropped). */
  runsSomething: boolean;
  /** The thread's pending approvals as read for this resume (the resume need not read them again). */
  paused: PendingApproval[];
}

/**
 * The resume a paused thread is owed: every interrupt of the paused batch decided, none of them
 * resumed yet. Null while one is still pending or when nothing is owed. Decisions the graph has
 * already consumed (a crash after the resume got past the pause) are marked resumed here.
 */
export async function owedResume(
  db: Queryable,
  agent: AgentRuntime,
  threadId: string,
  now: () => Date,
  read: {
    /** The thread's decided, not resumed approvals when the caller has just read them. */
    decided?: Approval[];
    /** The thread's paused interrupts when the caller started reading them already (alongside its decision). */
    paused?: Promise<PendingApproval[]>;
  } = {},
): Promise<OwedResume | null> {
  const decided = read.decided ?? (await listDecidedNotResumed(db, threadId));
  if (decided.length === 0) return null;
  const paused = await (read.paused ?? agent.pendingApprovals(threadId));
  const live = decided.filter((d) => paused.some((p) => p.interruptId === d.interruptId));
  const consumed = decided.filter((d) => !live.includes(d)).map((d) => d.id);
  await markResumed(db, consumed, now());
  if (live.length === 0) return null;
  const decisions = resumeDecisions(
    paused,
    live.map((d) => ({ interruptId: d.interruptId, decision: decisionOf({ status: d.status as Exclude<typeof d.status, 'pending'>, reason: d.reason }), actionHash: d.actionHash, requestedBy: d.requestedBy })),
  );
  if (!decisions) return null;
  return { decisions, approvalIds: live.map((d) => d.id), runsSomething: Object.values(decisions).some((d) => d.approved), paused };
}

/**
 * The conversation's decided, not resumed approvals right after a decision, worked out from what
 * the turn read before it (`unresumed`) and what it resolved; null when that cannot be known (a
 * pending approval was left undecided or resolved by someone else: read them again).
 */
export function decidedAfter(unresumed: Approval[], resolved: ResolvedApproval[]): Approval[] | null {
  const byId = new Map(resolved.map((r) => [r.approvalId, r.approval]));
  const after = unresumed.map((a) => (a.status === 'pending' ? byId.get(a.id) : a));
  return after.every((a) => a !== undefined) ? (after as Approval[]) : null;
}

/** Threads with decisions not yet resumed (the start-up recovery's work list), with who decided. */
export async function threadsOwedResume(db: Queryable): Promise<Array<{ threadId: string; conversationId: string; userId: string }>> {
  const seen = new Map<string, { threadId: string; conversationId: string; userId: string }>();
  for (const a of await listDecidedNotResumed(db)) {
    if (!seen.has(a.threadId)) seen.set(a.threadId, { threadId: a.threadId, conversationId: a.conversationId, userId: a.requestedBy });
  }
  return [...seen.values()];
}


export interface OpenedApproval {
  approvalId: string;
  toolCallId: string;
  tool: string;
  input: Record<string, unknown>;
  prompt: string;
  expiresAt: Date;
  timeoutS: number;
  /** The policy decision that paused the call. */
  policy?: PolicyStamp;
}

/** Records one pending approval per paused tool call, all expiring together, each bound to its action. */
export async function openApprovals(
  db: Queryable,
  pause: { conversationId: string; userId: string; pending: PendingApproval[]; timeoutS: number; now: () => Date },
): Promise<OpenedApproval[]> {
  const expiresAt = new Date(pause.now().getTime() + pause.timeoutS * 1000);
  const opened: OpenedApproval[] = [];
  for (const p of pause.pending) {
    const prompt = p.prompt ?? approvalPrompt(p.tool, p.args);
    const approval = await createApproval(db, {
      conversationId: pause.conversationId,
      threadId: pause.conversationId,
      interruptId: p.interruptId,
      toolCallId: p.toolCallId,
      tool: p.tool,
      args: p.args,
      argsHash: hashArgs(p.args),
      actionHash: actionHash({ tool: p.tool, args: p.args, userId: pause.userId }),
      prompt,
      requestedBy: pause.userId,
      expiresAt,
      policy: p.policy ?? null,
    });
    opened.push({ approvalId: approval.id, toolCallId: p.toolCallId, tool: p.tool, input: p.args, prompt, expiresAt, timeoutS: pause.timeoutS, ...(p.policy ? { policy: p.policy } : {}) });
  }
  return opened;
}
