/**
 * The thread's approvals as AG-UI sees them: those still pending as Interrupts (a pause that asked
 * nothing itself names them), and whether a resume answers one that has already expired.
 * @module
 */
import type { Interrupt } from '@ag-ui/core';
import { listPendingApprovals } from '../db/approvals.ts';
import type { Pool } from '../db/index.ts';
import { toInterrupt } from './projection.ts';

/** The approvals of the thread still waiting for a decision, as Interrupts. */
export async function pendingInterrupts(pool: Pool, conversationId: string): Promise<Interrupt[]> {
  return (await listPendingApprovals(pool, conversationId)).map((a) =>
    toInterrupt({
      run_id: '',
      approval_id: a.id,
      tool_call_id: a.toolCallId,
      tool: a.tool,
      input: a.args,
      prompt: a.prompt,
      expires_at: a.expiresAt.toISOString(),
      timeout_s: Math.max(1, Math.round((a.expiresAt.getTime() - a.createdAt.getTime()) / 1000)),
    }),
  );
}

/** The pending approval a resolved resume entry names, when it has expired (a stale resume). */
export async function expiredApproval(pool: Pool, conversationId: string, approvalIds: string[], now: Date): Promise<string | null> {
  const pending = await listPendingApprovals(pool, conversationId);
  return pending.find((a) => approvalIds.includes(a.id) && a.expiresAt.getTime() <= now.getTime())?.id ?? null;
}
