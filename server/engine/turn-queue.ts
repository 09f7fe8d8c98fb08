/**
 * Queued input (issue 24 item 4, seed 001): a message sent while its conversation's agent runs
 * waits in PostgreSQL (db/queued-inputs.ts) and runs as the next turn, in order, at most
 * `max` per conversation (MAX_QUEUED_INPUTS; beyond, CONVERSATION_BUSY as before).
 *
 *   submit finds the conversation busy (a run streams, or messages wait) -> enqueue -> a waiting handle
 *   any turn here ends | a message is queued | recovery's sweep -> startNext: claim the head
 *     (lease + run row + queue row gone, one transaction; never while an approval waits)
 *     -> link (prepareTurn) -> a token minted for its user now -> the turn runs here
 *   the waiting handle: {position} -> its run's events once started (any process) | CONFLICT when removed
 *
 * The claimed turn's user.message carries `delivery: "queue"`, and it (with its history row) is
 * written when the turn starts: until then the message is only a queue row, so removing it leaves
 * no trace in the conversation. The turn acts with a token minted when it starts, never with the
 * submitter's (which may have expired while it waited, or live in another process).
 * @module
 */
import { getRun, finishRun, type Run } from '../db/runs.ts';
import { releaseLease } from '../db/leases.ts';
import type { Pool } from '../db/index.ts';
import { claimQueuedInput, enqueueInput, listStalledQueues, queuedPosition, removeQueuedInput, removeQueuedRun, type QueuedInput } from '../db/queued-inputs.ts';
import { AirlockError } from '../errors.ts';
import type { LiveEvent } from './events.ts';
import type { Ledger } from './ledger.ts';
import { ConversationLease } from './lease.ts';
import type { TurnHandle } from './local-turns.ts';
import { replayDecision, requestConflict } from './submit-acceptance.ts';
import type { OpenedTurn } from './turn-open.ts';
import type { TurnContext } from './turn-scope.ts';
import type { TurnInput, TurnUser } from './types.ts';

/** What queued input needs from its deployment. Absent (engine tests), a busy conversation answers CONVERSATION_BUSY. */
export interface QueueSettings {
  /** MAX_QUEUED_INPUTS: messages one conversation may have waiting. */
  max: number;
  /** A token for the turn's user, minted when a queued turn starts. */
  mintUserToken(userId: string): Promise<string>;
}

export interface TurnQueueOptions extends QueueSettings {
  pool: Pool;
  ledger: Ledger;
  owner: string;
  leaseTtlS: number;
  log: { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
  /** No turn starts here any more (the process is closing): the queue waits for another process. */
  closing(): boolean;
  /** Links a claimed turn (EngineOptions.prepareTurn); a refusal settles its run and frees the conversation. */
  link(run: Run, lease: ConversationLease, user: TurnUser, input: TurnInput & { requestId: string }): Promise<OpenedTurn>;
  /** Starts a claimed, linked turn in this process. */
  start(run: Run, user: TurnUser, input: TurnContext['input'], opened: OpenedTurn): void;
  /** A follower's handle of a started run. */
  handle(run: Pick<Run, 'id' | 'conversationId'>, replayed: boolean): TurnHandle;
  /** Stops a run of this process; false when it does not run here. */
  stop(runId: string): boolean;
}

/** What a queue row keeps of a turn's input (never a token). */
type StoredInput = Pick<TurnInput, 'text' | 'files' | 'clientMessageId' | 'origin'> & { storedPaths: string[] };

export class TurnQueue {
  readonly #o: TurnQueueOptions;

  constructor(options: TurnQueueOptions) {
    this.#o = options;
  }

  /** Queues a submit its conversation is too busy for; CONVERSATION_BUSY when `max` already wait. Null: its request id was taken meanwhile (replay it). */
  async enqueue(runId: string, user: TurnUser, input: TurnInput & { requestId: string; conversationId: string }, storedPaths: string[], hash: string): Promise<TurnHandle | null> {
    const stored: StoredInput = { text: input.text, files: input.files, clientMessageId: input.clientMessageId ?? null, origin: input.origin, storedPaths };
    const result = await enqueueInput(this.#o.pool, { runId, conversationId: input.conversationId, userId: user.userId, requestId: input.requestId, requestHash: hash, input: stored as unknown as Record<string, unknown>, max: this.#o.max });
    if ('taken' in result) return null;
    if ('full' in result) throw new AirlockError('CONVERSATION_BUSY', `This conversation is busy and ${this.#o.max} messages already wait for their turn; send again when one has started.`);
    // The turn may have ended between the busy answer and the insert: nobody else would start it.
    void this.startNext(input.conversationId);
    return this.#waiting(result.queued, false);
  }

  /** A retry of a queued submit (same request id): the same payload follows it, another is a CONFLICT. */
  replay(queued: QueuedInput, hash: string): TurnHandle {
    if (replayDecision({ storedHash: queued.requestHash, hash }) === 'conflict') throw requestConflict();
    return this.#waiting(queued, true);
  }

  /** DELETE …/queue/{request_id}: removes the user's message before it starts; false when none waits. */
  async remove(userId: string, conversationId: string, requestId: string): Promise<boolean> {
    const removed = await removeQueuedInput(this.#o.pool, { userId, conversationId, requestId });
    if (removed) await this.#o.ledger.wake(conversationId).catch(() => {});
    return removed;
  }

  /** Starts the conversation's next queued message here when it is free (no run, no pending approval). */
  async startNext(conversationId: string): Promise<void> {
    if (this.#o.closing()) return;
    try {
      const claimed = await claimQueuedInput(this.#o.pool, { conversationId, owner: this.#o.owner, leaseTtlS: this.#o.leaseTtlS });
      if (claimed) await this.#begin(claimed.queued, claimed.run);
    } catch (err) {
      this.#o.log.error({ err, conversationId }, 'a queued message could not start');
    }
  }

  /** Recovery's sweep: conversations whose queue waits with no lease in force (their run's process died). */
  async sweep(): Promise<void> {
    for (const conversationId of await listStalledQueues(this.#o.pool)) await this.startNext(conversationId);
  }

  async #begin(queued: QueuedInput, run: Run): Promise<void> {
    const stored = queued.input as unknown as StoredInput;
    const input = { text: stored.text, files: stored.files, conversationId: run.conversationId, action: null, requestId: queued.requestId, approvalId: null, clientMessageId: stored.clientMessageId ?? null, origin: stored.origin, delivery: 'queue' as const };
    const lease = ConversationLease.held(this.#o.pool, run.conversationId, run.id, this.#o.leaseTtlS);
    let token: string;
    let opened: OpenedTurn;
    try {
      opened = await this.#o.link(run, lease, { userId: queued.userId, token: '' }, input);
      token = opened.setup.userToken ?? (await this.#o.mintUserToken(queued.userId));
    } catch (err) {
      // Refused (link) or no token (the user is gone): this message ends failed; the next may start.
      this.#o.log.warn({ err, runId: run.id }, 'a queued message was refused when its turn came');
      await finishRun(this.#o.pool, { id: run.id, status: 'failed' }).catch(() => {});
      await releaseLease(this.#o.pool, { conversationId: run.conversationId, holder: run.id }).catch(() => {});
      return this.startNext(run.conversationId);
    }
    this.#o.start(run, { userId: queued.userId, token }, { ...input, storedPaths: stored.storedPaths }, opened);
  }

  /** The handle of a queued submit: its position now, then its run's events once it started. */
  #waiting(queued: QueuedInput, replayed: boolean): TurnHandle {
    const { runId, conversationId } = queued;
    const started = () => this.#waitStart(runId, conversationId);
    const o = this.#o;
    return {
      runId,
      conversationId,
      replayed,
      queued: { position: queued.position, requestId: queued.requestId },
      async *events(): AsyncIterableIterator<LiveEvent> {
        const run = await started();
        if (!run) throw new AirlockError('CONFLICT', 'This queued message was removed before it started.');
        yield* o.handle(run, replayed).events();
      },
      // Its own submitter's cancel: a message still waiting is removed; a started one is stopped.
      cancel: () => {
        void removeQueuedRun(o.pool, runId).then(
          async (removed) => {
            if (removed) await o.ledger.wake(conversationId);
            else o.stop(runId);
          },
          () => void o.stop(runId),
        );
      },
      finished: async () => {
        const run = await started();
        if (run) await o.handle(run, replayed).finished();
      },
    };
  }

  /**
   * Waits until the queued run started (its run row) or was removed (null). Woken by the
   * conversation's commits and wakes in every process (a started turn's first commit, a removal).
   */
  async #waitStart(runId: string, conversationId: string): Promise<Run | null> {
    let wake: (() => void) | null = null;
    const unsubscribe = this.#o.ledger.subscribe(conversationId, () => wake?.());
    try {
      for (;;) {
        const woken = new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, FALLBACK_MS).unref();
        });
        if ((await queuedPosition(this.#o.pool, { conversationId, runId })) === null) return getRun(this.#o.pool, runId);
        await woken;
      }
    } finally {
      unsubscribe();
    }
  }
}

/** A re-read without a wake (a lost notification). */
const FALLBACK_MS = 5_000;
