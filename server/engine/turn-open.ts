/**
 * Opening a submitted turn (engine.ts): the conversation (new or the owner's), its lease and the
 * run row in one round trip, then the link (EngineOptions.prepareTurn). A concurrent submit with
 * the same request_id that won the run insert is followed instead (replay).
 *
 *   new conversation      -> conversation + lease + run row -> link
 *   existing conversation -> owner check + lease (BUSY) + run row -> link, approvals read alongside
 *   lost the insert race  -> release the lease -> replay the winner (or CONFLICT)
 * @module
 */
import { listUnresumedApprovals, type Approval } from '../db/approvals.ts';
import type { Pool } from '../db/index.ts';
import type { BranchAt } from '../db/branches.ts';
import { findRunByRequest, finishRun, type Run } from '../db/runs.ts';
import { openExistingConversationTurn, openNewConversationTurn } from '../db/turn-opening.ts';
import { AirlockError } from '../errors.ts';
import { isDecision } from '../approvals/types.ts';
import { ConversationLease } from './lease.ts';
import type { TurnHandle } from './local-turns.ts';
import { replayDecision, requestConflict } from './submit-acceptance.ts';
import { readAhead } from './turn.ts';
import type { TurnInput, TurnSetup, TurnUser } from './types.ts';

export type PrepareTurn = (turn: { runId: string; conversationId: string; userId: string; requestId: string; action: TurnInput['action']; fresh: boolean }) => Promise<TurnSetup | void>;

export interface TurnOpenerOptions {
  pool: Pool;
  owner: string;
  leaseTtlS: number;
  prepareTurn?: PrepareTurn;
  /** A follower's handle of a run (a replay's). */
  handle(run: Run, replayed: boolean): TurnHandle;
}

export type OpenedTurn = { run: Run; lease: ConversationLease; setup: TurnSetup; unresumed?: Promise<Approval[]>; branchAt?: BranchAt };
export type Opened = OpenedTurn | { replayed: TurnHandle };
export type Submitted = TurnInput & { requestId: string };

export function createTurnOpener(options: TurnOpenerOptions) {
  const { pool, owner, leaseTtlS } = options;

  /** A concurrent submit with the same request_id won the run insert: follow its run. */
  async function replayWinner(lease: ConversationLease, user: TurnUser, input: Submitted, hash: string): Promise<Opened> {
    await lease.release();
    return { replayed: replay((await findRunByRequest(pool, { userId: user.userId, requestId: input.requestId, conversationId: input.conversationId }))!, hash) };
  }

  /**
   * An existing conversation: the owner check, its lease (BUSY if another run streams) and the run
   * row in one round trip; then the link, with the approvals lookup alongside.
   */
  async function openTurn(runId: string, conversationId: string, user: TurnUser, input: Submitted, hash: string): Promise<Opened> {
    const opened = await openExistingConversationTurn(pool, { userId: user.userId, conversationId, runId, requestId: input.requestId, requestHash: hash, owner, leaseTtlS });
    if (!opened.found) throw isDecision(input.action) ? new AirlockError('APPROVAL_NOT_FOUND') : new AirlockError('NOT_FOUND', 'This conversation does not exist.');
    if (!opened.leased) throw new AirlockError('CONVERSATION_BUSY');
    const lease = ConversationLease.held(pool, conversationId, runId, leaseTtlS);
    if (!opened.run) return replayWinner(lease, user, input, hash);
    // Read under the lease (taken above), while the turn is linked: no new pause can open meanwhile.
    const unresumed = readAhead(listUnresumedApprovals(pool, conversationId));
    return { ...(await linked(opened.run, lease, user, input, false)), unresumed, branchAt: opened.branchAt };
  }

  /** A new conversation: the conversation, its lease and the run row in one round trip, then the link. */
  async function openFreshTurn(runId: string, user: TurnUser, input: Submitted, hash: string): Promise<Opened> {
    const text = input.text || 'Attachments';
    const opened = await openNewConversationTurn(pool, { userId: user.userId, text, runId, requestId: input.requestId, requestHash: hash, owner, leaseTtlS });
    const lease = ConversationLease.held(pool, opened.conversationId, runId, leaseTtlS);
    if (!opened.run) return replayWinner(lease, user, input, hash);
    return linked(opened.run, lease, user, input, true);
  }

  /** Links the opened turn (EngineOptions.prepareTurn); a refusal settles the run row and frees the conversation. */
  async function linked(run: Run, lease: ConversationLease, user: TurnUser, input: Submitted, fresh: boolean): Promise<OpenedTurn> {
    try {
      const setup = await options.prepareTurn?.({ runId: run.id, conversationId: run.conversationId, userId: user.userId, requestId: input.requestId, action: input.action, fresh });
      return { run, lease, setup: setup ?? {} };
    } catch (error) {
      await finishRun(pool, { id: run.id, status: 'failed' }).catch(() => {});
      await lease.release().catch(() => {});
      throw error;
    }
  }

  /** An earlier run with the request's id: the same payload follows it, another is a CONFLICT. */
  function replay(existing: Run, hash: string): TurnHandle {
    if (replayDecision({ storedHash: existing.requestHash, hash }) === 'conflict') throw requestConflict();
    return options.handle(existing, true);
  }

  /** Opens the turn in a new conversation (`conversationId` null) or in the user's existing one. */
  function open(runId: string, conversationId: string | null, user: TurnUser, input: Submitted, hash: string): Promise<Opened> {
    return conversationId ? openTurn(runId, conversationId, user, input, hash) : openFreshTurn(runId, user, input, hash);
  }

  /** Links a turn claimed from the queue (turn-queue.ts): its lease and run row were taken with the claim. */
  const link = (run: Run, lease: ConversationLease, user: TurnUser, input: Submitted) => linked(run, lease, user, input, false);

  return { open, replay, link };
}

export type TurnOpener = ReturnType<typeof createTurnOpener>;
