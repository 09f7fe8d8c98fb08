/**
 * The engine: starts turns as runs that belong to no connection, and lets any number of
 * followers (the submitting client, a retry with the same request_id, an event stream) watch a
 * run from its start. A follower that goes away leaves the run alone; only cancel() stops it.
 *
 *   submit -> input ok? -> request_id known? (replay | CONFLICT)                          submit
 *     -> conversation + lease + run row (one statement) -> link (prepareTurn)          turn-open.ts
 *     -> runTurn in the background -> TurnHub (live) + ledger (durable)                 local-turns.ts
 *     busy (a run streams, or messages wait) and a chat message -> queued             turn-queue.ts
 *   a turn ends here -> the conversation's next queued message starts                turn-queue.ts
 *   recovery of orphaned runs, then of queues they left waiting, every SWEEP_S         startRecovery
 * @module
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { AgentRuntime, TitleModel } from '../agent/index.ts';
import { precheckDecision } from '../approvals/decide.ts';
import type { Pool } from '../db/index.ts';
import { findQueuedInput, type QueuedInput } from '../db/queued-inputs.ts';
import { findRunByRequest, type Run } from '../db/runs.ts';
import { AirlockError, isAirlockError } from '../errors.ts';
import { processMetrics, type Metrics } from '../metrics/index.ts';
import { ModelTitles, type ModelTitlesOptions } from './first-title.ts';
import type { Ledger } from './ledger.ts';
import type { LedgerEvent } from './events.ts';
import { switchBranch } from './branch-switch.ts';
import { LocalTurns, type TurnHandle } from './local-turns.ts';
import { recoverOrphanedRuns } from './recovery.ts';
import type { TurnHub } from './turn-hub.ts';
import { isDecision } from '../approvals/types.ts';
import { TurnQueue, type QueueSettings } from './turn-queue.ts';
import { checkTurnInput, requestHash } from './submit-acceptance.ts';
import { createTurnOpener, type PrepareTurn, type TurnOpener } from './turn-open.ts';
import type { TurnDeps } from './turn.ts';
import type { FileStorage, TurnInput, TurnUser } from './types.ts';

export type { TurnHandle } from './local-turns.ts';

export interface EngineOptions {
  pool: Pool;
  ledger: Ledger;
  agent: AgentRuntime;
  files: FileStorage;
  approvalTimeoutS: number;
  /** Write approval notifications to the outbox (APPROVAL_WEBHOOKS configured; issue 26). */
  approvalOutbox?: boolean;
  /** Lease of the conversation and of the run row; renewed every third of it while running. */
  leaseTtlS: number;
  /** This process, as the owner of its runs (default host:pid:random). */
  owner?: string;
  log: TurnDeps['log'];
  now?: () => Date;
  /** Keeps a run's last commit that failed while the database was away, and retries it. */
  pendingWrites?: TurnDeps['pendingWrites'];
  /** Reads and frames a message's files for the model (default: none are read). */
  prepareAttachments?: TurnDeps['prepareAttachments'];
  /** Where runs are measured (default: the process's Prometheus registry). */
  metrics?: Metrics;
  /** Told after a pause committed its approvals (the headless API schedules their expiry). */
  onApprovalsOpened?: TurnDeps['onApprovalsOpened'];
  /**
   * Called once per turn, with the conversation lease taken and the run row written (they open in
   * one statement) and before the turn starts: the headless API links the turn to its run and
   * returns the run's stored tool policy (so a resume through /chat applies it too). A throw
   * refuses the turn (its run row is settled failed, the conversation freed).
   */
  prepareTurn?: PrepareTurn;
  /** Queued input (turn-queue.ts, issue 24): absent, a message to a busy conversation is CONVERSATION_BUSY. */
  queue?: QueueSettings;
  /** A real model's title after a conversation's first answer (first-title.ts); absent: the rule's title stays. */
  titleModel?: TitleModel;
  /** Told of each model title asked, with its outcome (tests await it). */
  onModelTitle?: ModelTitlesOptions['onAsked'];
}

export interface SubmitOptions {
  /**
   * A message to a conversation whose agent runs (not paused) waits for its turn instead of
   * CONVERSATION_BUSY (the chat transports; a background job retries on its own).
   */
  queue?: boolean;
}

export interface Engine {
  /** This process, as the owner of its runs. */
  owner: string;
  /** Starts a turn, or finds the run of an earlier submit with the same request_id. */
  submit(rawInput: TurnInput, user: TurnUser, options?: SubmitOptions): Promise<TurnHandle>;
  /** Removes the user's queued message (DELETE …/queue/{request_id}); false when none waits under that id. */
  removeQueued(userId: string, conversationId: string, requestId: string): Promise<boolean>;
  /**
   * Stop for a conversation's running answer, whoever follows it (issue 30: a page reloaded
   * while its answer ran has no submission left to cancel). False when no run of it is here.
   */
  cancelConversation(conversationId: string): boolean;
  /** The branch switch (issue 29, branch-switch.ts): commits branch.switched; the thread follows at the next turn. */
  switchBranch(conversationId: string, branch: number): Promise<LedgerEvent>;
  /** The run streaming in this process for a conversation (for partial frames), if any. */
  liveRun(conversationId: string): TurnHub | undefined;
  /**
   * Finishes orphaned runs now and every SWEEP_S (or lease period, when shorter) until `stop()`. A
   * killed peer is an orphan's owner at once (liveness.ts), so its runs settle within one sweep.
   */
  startRecovery(): { ready: Promise<string[]>; stop(): void };
  /** The process is closing: transports that now cancel their runs do so for the shutdown. */
  closing(): void;
  /**
   * The shutdown's drain: the runs of this process may end by themselves until `deadline` (ms since
   * the epoch, the grace's end), whichever transport follows them; then the rest are stopped.
   */
  drain(deadline: number): Promise<void>;
  /**
   * Ends every run of this process with `error` (each commits it as its failure, its partial
   * answer kept) and waits for them: the process lost its liveness connection (liveness.ts), so
   * another may take these conversations over.
   */
  abandon(error: AirlockError, timeoutMs?: number): Promise<void>;
  /** Stops every run of this process (each commits cancelled/shutdown) and waits for them. */
  shutdown(timeoutMs?: number): Promise<void>;
}

/** How often a process looks for runs whose owner died (issue 23: a dead replica's run settles within 5 s). */
const SWEEP_S = 5;

export function createEngine(options: EngineOptions): Engine {
  const { pool, ledger } = options;
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const now = options.now ?? (() => new Date());
  const titles = options.titleModel ? new ModelTitles({ pool, model: options.titleModel, log: options.log, onAsked: options.onModelTitle }) : undefined;
  const deps = { pool, ledger, agent: options.agent, approvalTimeoutS: options.approvalTimeoutS, approvalOutbox: options.approvalOutbox, now, log: options.log, pendingWrites: options.pendingWrites, prepareAttachments: options.prepareAttachments, files: options.files, onApprovalsOpened: options.onApprovalsOpened, titles };
  let queue: TurnQueue | undefined;
  const local = new LocalTurns({ pool, ledger, owner, leaseTtlS: options.leaseTtlS, metrics: options.metrics ?? processMetrics(), log: options.log, deps, onEnded: (id) => void queue?.startNext(id) });
  const opener = createTurnOpener({ pool, owner, leaseTtlS: options.leaseTtlS, prepareTurn: options.prepareTurn, handle: (run, replayed) => local.handle(run, replayed) });
  if (options.queue) {
    queue = new TurnQueue({
      ...options.queue,
      pool,
      ledger,
      owner,
      leaseTtlS: options.leaseTtlS,
      log: options.log,
      closing: () => local.closing,
      link: opener.link,
      start: (run, user, input, opened) => local.start(run, user, input, { lease: opened.lease, fresh: false, setup: opened.setup }, performance.now()),
      handle: (run, replayed) => local.handle(run, replayed),
      stop: (runId) => local.stop(runId),
    });
  }
  return {
    owner,
    submit: (rawInput, user, submitOptions) => submit({ pool, files: options.files, opener, local, now, queue: submitOptions?.queue ? queue : undefined }, rawInput, user),
    removeQueued: async (userId, conversationId, requestId) => (queue ? queue.remove(userId, conversationId, requestId) : false),
    cancelConversation(conversationId) {
      const hub = local.live(conversationId);
      return hub !== undefined && local.stop(hub.runId);
    },
    switchBranch: (conversationId, branch) => switchBranch({ pool, ledger, owner }, conversationId, branch),
    liveRun: (conversationId) => local.live(conversationId),
    startRecovery: () => startRecovery(options, queue),
    closing() {
      local.closing = true;
    },
    // The model's titles in flight stop with the runs: none writes once the process closes.
    async drain(deadline) {
      await local.drain(deadline);
      await titles?.close();
    },
    abandon: (error, timeoutMs = 5_000) => local.abortAll(error, timeoutMs),
    async shutdown(timeoutMs) {
      await local.shutdown(timeoutMs);
      await titles?.close();
    },
  };
}

/**
 * A submit: input ok? -> request_id known? (replay | CONFLICT) -> conversation + lease + run row
 * (turn-open.ts) -> the turn runs in the background (local-turns.ts).
 */
async function submit(env: { pool: Pool; files: FileStorage; opener: TurnOpener; local: LocalTurns; now: () => Date; queue?: TurnQueue }, rawInput: TurnInput, user: TurnUser): Promise<TurnHandle> {
  const submittedAt = performance.now();
  const storedPaths = await checkTurnInput(rawInput, env.files, user.userId);
  const input = { ...rawInput, requestId: rawInput.requestId ?? randomUUID() };
  const hash = requestHash(input);
  // Before the lease: a retry of a running (or queued) turn must find it, never CONVERSATION_BUSY.
  // (A key we generated cannot have been used.)
  const earlier = rawInput.requestId ? await findRequest(env.pool, user.userId, input) : null;
  if (earlier?.run) return env.opener.replay(earlier.run, hash);
  if (earlier?.queued && env.queue) return env.queue.replay(earlier.queued, hash);

  if (!input.conversationId && isDecision(input.action)) throw new AirlockError('APPROVAL_NOT_FOUND');
  // A decision that will be refused is refused now, before any run (issue 26): the same check as
  // the v1 API's. Not an expiry's (decided by nobody: decidedBy null).
  if (input.conversationId && isDecision(input.action) && input.decidedBy !== null) {
    await precheckDecision(env.pool, { conversationId: input.conversationId, approvalId: input.approvalId, action: input.action, deciderId: input.decidedBy ?? user.userId, now: env.now(), origin: input.origin });
  }
  const runId = randomUUID();
  const fresh = !input.conversationId;
  let opened;
  try {
    opened = await env.opener.open(runId, input.conversationId, user, input, hash);
  } catch (error) {
    // Busy (a run streams, or messages wait): a chat message queues behind them (a decision never does).
    if (!env.queue || input.action || !input.conversationId || !isAirlockError(error) || error.code !== 'CONVERSATION_BUSY') throw error;
    const queued = await env.queue.enqueue(runId, user, { ...input, conversationId: input.conversationId }, storedPaths, hash);
    return queued ?? submit(env, rawInput, user); // its request id was taken meanwhile: replay that
  }
  if ('replayed' in opened) return opened.replayed;
  const { run, lease, setup, unresumed, branchAt } = opened;
  env.local.start(run, user, { ...input, storedPaths }, { lease, fresh, setup, unresumed, branchAt }, submittedAt);
  return env.local.handle(run, false);
}

/** The run, or the queued message, of an earlier submit with this request id (looked up together: one round trip). */
async function findRequest(pool: Pool, userId: string, input: TurnInput & { requestId: string }): Promise<{ run: Run | null; queued: QueuedInput | null }> {
  const { conversationId, requestId } = input;
  const [run, queued] = await Promise.all([
    findRunByRequest(pool, { userId, requestId, conversationId }),
    conversationId ? findQueuedInput(pool, { userId, conversationId, requestId }) : null,
  ]);
  return { run, queued };
}

/** Recovery of orphaned runs, then of queues left waiting by them, now and every SWEEP_S (Engine.startRecovery). */
function startRecovery(options: EngineOptions, queue?: TurnQueue): { ready: Promise<string[]>; stop(): void } {
  // This process's own runs whose end waits for the database (pendingWrites) are written first:
  // after a long outage their leases have lapsed, and recovery would settle them as orphans with
  // an empty answer, the kept one then dropped as "settled elsewhere" (issue 30).
  const sweep = () =>
    Promise.resolve(options.pendingWrites?.flush?.())
      .then(() => recoverOrphanedRuns(options.pool, options.ledger))
      .then(async (finished) => (await queue?.sweep(), finished))
      .catch((err) => (options.log.error({ err }, 'run recovery failed'), []));
  const timer = setInterval(sweep, Math.min(SWEEP_S, options.leaseTtlS) * 1000);
  timer.unref();
  return { ready: sweep(), stop: () => clearInterval(timer) };
}
