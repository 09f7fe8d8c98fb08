/**
 * Finishing runs whose owner died: a running run whose lease lapsed gets run.finished
 * failed / process_exit (and an error answer in history), so no conversation shows a spinner
 * forever. A run whose ledger ends in an approved approval.resolved with no tool.result after it
 * is left to the approval recovery (approvals/recovery.ts), which resumes it in a new run; once the
 * conversation has moved on, the orphan is finished quietly (the new run carries the answer).
 * A decision turn that counted one approver of several (approval.approved, M-of-N) and died before
 * its end committed is finished as it would have ended: paused for the approvals still needed,
 * with no error answer (the approval is pending and the next approver completes it).
 * @module
 */
import { withTransaction, type Pool } from '../db/index.ts';
import { releaseLease } from '../db/leases.ts';
import { finishRun, listOrphanedRuns, type Run } from '../db/runs.ts';
import { runFinishedDraft } from './drafts.ts';
import type { LedgerEvent } from './events.ts';
import type { Ledger } from './ledger.ts';
import { Transcript } from './transcript.ts';

export const PROCESS_EXIT_DETAIL = 'The server stopped while answering. Ask again to continue.';

/** Pure: does this run's ledger end in an approved approval whose tool has not reported yet? */
export function awaitsApprovedTool(events: readonly LedgerEvent[]): boolean {
  const lastConfirm = events.findLastIndex((e) => e.kind === 'approval.resolved' && e.payload.result === 'confirmed');
  return lastConfirm >= 0 && !events.slice(lastConfirm + 1).some((e) => e.kind === 'tool.result');
}

/** Pure: did this run count an approver (M-of-N progress) and decide nothing after it? */
export function endsInProgress(events: readonly LedgerEvent[]): boolean {
  const last = events.findLast((e) => e.kind === 'approval.approved' || e.kind === 'approval.resolved' || e.kind === 'tool.call');
  return last?.kind === 'approval.approved';
}

/** Pure: the model turns a run had, counted from its ledger (tool rounds plus a final answer). */
export function countTurns(events: readonly LedgerEvent[]): number {
  let turns = 0;
  for (let i = 0; i < events.length; i++) {
    if (events[i].kind === 'tool.call' && events[i - 1]?.kind !== 'tool.call') turns++;
  }
  return turns;
}

/** Settles every orphaned run; returns the ids it finished. Safe to run in several processes at once. */
export async function recoverOrphanedRuns(pool: Pool, ledger: Ledger): Promise<string[]> {
  const finished: string[] = [];
  for (const run of await listOrphanedRuns(pool)) {
    const events = await ledger.readRun(run.conversationId, run.id);
    let quiet = false;
    if (awaitsApprovedTool(events)) {
      const later = await ledger.read(run.conversationId, { after: events.at(-1)!.seq, limit: 1 });
      if (later.length === 0) continue; // not resumed yet
      quiet = true;
    }
    const settled = endsInProgress(events) ? await finishPaused(pool, ledger, run) : await finishOrphan(pool, ledger, run, countTurns(events), quiet);
    if (settled) finished.push(run.id);
  }
  return finished;
}

async function finishPaused(pool: Pool, ledger: Ledger, run: Run): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    if (!(await finishRun(tx, { id: run.id, status: 'paused' }))) return false;
    await releaseLease(tx, { conversationId: run.conversationId, holder: run.id });
    await ledger.append(run.conversationId, [runFinishedDraft(run.id, { status: 'paused', turns: 0, startedAt: run.startedAt.getTime(), stopReason: 'approval_required' })], { tx });
    return true;
  });
}

async function finishOrphan(pool: Pool, ledger: Ledger, run: Run, turns: number, quiet: boolean): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    // The conditional UPDATE is the claim: of two recovering processes, one settles the run.
    if (!(await finishRun(tx, { id: run.id, status: 'failed' }))) return false;
    const error = { code: 'INTERNAL', detail: PROCESS_EXIT_DETAIL };
    if (!quiet) await new Transcript(tx, run.conversationId).endAnswer({ error }, tx);
    await releaseLease(tx, { conversationId: run.conversationId, holder: run.id });
    await ledger.append(
      run.conversationId,
      [
        ...(quiet ? [] : [{ kind: 'assistant.message' as const, payload: { run_id: run.id, text: '', error } }]),
        runFinishedDraft(run.id, { status: 'failed', turns, startedAt: run.startedAt.getTime(), stopReason: 'process_exit', error }),
      ],
      { tx },
    );
    return true;
  });
}
