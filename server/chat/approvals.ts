/**
 * The approval steps of a /chat turn: resolving what is pending (atomically, once) and opening
 * approvals when the agent pauses. Decisions are in approval-policy.ts; SQL in db/approvals.ts.
 * @module
 */
import type { ApprovalDecision, PendingApproval } from '../agent/index.ts';
import { createApproval, listPendingApprovals, resolveApproval } from '../db/approvals.ts';
import type { Queryable } from '../db/index.ts';
import { approvalPrompt, hashArgs, resolvePendingApproval, type ResolvedResult } from './approval-policy.ts';
import type { ChatAction } from './input.ts';

export interface ResolvedApproval {
  approvalId: string;
  interruptId: string;
  result: ResolvedResult;
  decision: ApprovalDecision;
}

/**
 * Resolves every pending approval of the conversation for this turn's action (a new message:
 * `null`). Approvals a concurrent request resolved first are skipped: that request resumes them.
 */
export async function resolvePendingApprovals(
  db: Queryable,
  turn: { conversationId: string; userId: string; action: ChatAction | null; now: () => Date },
): Promise<ResolvedApproval[]> {
  const resolved: ResolvedApproval[] = [];
  for (const approval of await listPendingApprovals(db, turn.conversationId)) {
    const resolution = resolvePendingApproval({ expiresAt: approval.expiresAt, action: turn.action, now: turn.now() });
    const row = await resolveApproval(db, {
      id: approval.id,
      userId: turn.userId,
      status: resolution.outcome,
      reason: resolution.reason,
      now: turn.now(),
    });
    if (row) resolved.push({ approvalId: row.id, interruptId: row.interruptId, result: resolution.result, decision: resolution.decision });
  }
  return resolved;
}

export interface OpenedApproval {
  approvalId: string;
  tool: string;
  input: Record<string, unknown>;
  prompt: string;
  expiresAt: Date;
  timeoutS: number;
}

/** Records one pending approval per paused tool call, all expiring together. */
export async function openApprovals(
  db: Queryable,
  pause: { conversationId: string; userId: string; pending: PendingApproval[]; timeoutS: number; now: () => Date },
): Promise<OpenedApproval[]> {
  const expiresAt = new Date(pause.now().getTime() + pause.timeoutS * 1000);
  const opened: OpenedApproval[] = [];
  for (const p of pause.pending) {
    const prompt = approvalPrompt(p.tool, p.args);
    const approval = await createApproval(db, {
      conversationId: pause.conversationId,
      threadId: pause.conversationId,
      interruptId: p.interruptId,
      toolCallId: p.toolCallId,
      tool: p.tool,
      args: p.args,
      argsHash: hashArgs(p.args),
      prompt,
      requestedBy: pause.userId,
      expiresAt,
    });
    opened.push({ approvalId: approval.id, tool: p.tool, input: p.args, prompt, expiresAt, timeoutS: pause.timeoutS });
  }
  return opened;
}
