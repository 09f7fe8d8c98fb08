/**
 * The branch switch `‹ 1/2 ›` (issue 29): the conversation shows, and continues on, another of its
 * branches. Only rows and one ledger event (branch.switched): the thread follows at the next turn
 * (turn-branch.ts alignBranch), which holds the conversation lease as every turn does.
 *
 * Refused while an answer runs (CONVERSATION_BUSY: the switch takes the lease for its
 * transaction) and while an approval waits or a decided one is still to be carried out (CONFLICT:
 * a card belongs to the branch it was asked on; decide it first, or Edit/Regenerate, which
 * supersede it).
 * @module
 */
import { randomUUID } from 'node:crypto';
import { listUnresumedApprovals } from '../db/approvals.ts';
import { setActiveBranch } from '../db/branches.ts';
import { withTransaction, type Pool } from '../db/index.ts';
import { releaseLease, tryTakeLease } from '../db/leases.ts';
import { AirlockError } from '../errors.ts';
import type { LedgerEvent } from './events.ts';
import type { Ledger } from './ledger.ts';

export async function switchBranch(env: { pool: Pool; ledger: Ledger; owner: string }, conversationId: string, branch: number): Promise<LedgerEvent> {
  // The event's run: the switch's own id (the ledger names a run on every event; no run row).
  const runId = randomUUID();
  return withTransaction(env.pool, async (tx) => {
    if (!(await tryTakeLease(tx, { conversationId, holder: runId, state: 'streaming', ttlS: 30, owner: env.owner }))) throw new AirlockError('CONVERSATION_BUSY');
    if ((await listUnresumedApprovals(tx, conversationId)).length > 0) {
      throw new AirlockError('CONFLICT', 'An approval of this branch is waiting: decide it before switching branches.');
    }
    if (!(await setActiveBranch(tx, conversationId, branch))) throw new AirlockError('NOT_FOUND', 'This conversation has no such branch.');
    const [event] = await env.ledger.append(conversationId, [{ kind: 'branch.switched', payload: { run_id: runId, ...(branch ? { branch } : {}) } }], { tx });
    await releaseLease(tx, { conversationId, holder: runId });
    return event;
  });
}
