/**
 * The engine: starts turns as runs that belong to no connection, and lets any number of
 * followers (the submitting client, a retry with the same request_id, an event stream) watch a
 * run from its start. A follower that goes away leaves the run alone; only cancel() stops it.
 *
 *   submit -> input ok? -> request_id known? (replay | CONFLICT) -> conversation + lease + run row
 *     (one statement) -> link (prepareTurn) -> runTurn in the background -> RunHub (live) + ledger (durable)
 * @module
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { AgentRuntime } from '../agent/index.ts';
import type { ResolvedApproval } from '../approvals/steps.ts';
import { ConversationLease } from './lease.ts';
import { listUnresumedApprovals, type Approval } from '../db/approvals.ts';
import type { Pool } from '../db/index.ts';
import { findRunByRequest, finishRun, renewRunLease, type Run } from '../db/runs.ts';
import { openExistingConversationTurn, openNewConversationTurn } from '../db/turn-opening.ts';
import { AirlockError } from '../errors.ts';
import { processMetrics, type Metrics } from '../metrics/index.ts';
import { countedStream, observe } from './observe.ts';
import { EventQueue } from './event-queue.ts';
import type { LiveEvent } from './events.ts';
import { followLedger } from './follow.ts';
import type { Ledger } from './ledger.ts';
import { recoverOrphanedRuns } from './recovery.ts';
import { RunHub } from './run-hub.ts';
import { checkTurnInput, replayDecision, requestConflict, requestHash } from './submit-policy.ts';
import { RunAbort, toTurnError } from './run-errors.ts';
import { readAhead, runTurn, type TurnContext, type TurnDeps } from './turn.ts';
import type { FileStorage, TurnInput, TurnSetup, TurnUser } from './types.ts';

export interface EngineOptions {
  pool: Pool;
  ledger: Ledger;
  agent: AgentRuntime;
  files: FileStorage;
  approvalTimeoutS: number;
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
  prepareTurn?: (turn: { runId: string; conversationId: string; userId: string; requestId: string; action: TurnInput['action']; fresh: boolean }) => Promise<TurnSetup | void>;
}

/** A run as a follower sees it. */
export interface RunHandle {
  runId: string;
  conversationId: string;
  /** True when the submit found an earlier run with its request_id. */
  replayed: boolean;
  /** The run's events from its start: committed, then live partials and commits, to run.finished. */
  events(): AsyncIterableIterator<LiveEvent>;
  /** Stop (the explicit user action). A no-op when the run is not running in this process. */
  cancel(): void;
  /** Settles when the run is no longer running in this process (at once when it never ran here). */
  finished(): Promise<void>;
}

interface LocalRun {
  hub: RunHub;
  controller: AbortController;
  done: Promise<void>;
}

export type Engine = ReturnType<typeof createEngine>;

/** How often a process looks for runs whose owner died (issue 23: a dead replica's run settles within 5 s). */
const SWEEP_S = 5;

export function createEngine(options: EngineOptions) {
  const { pool, ledger } = options;
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const now = options.now ?? (() => new Date());
  const deps: TurnDeps = { pool, ledger, agent: options.agent, approvalTimeoutS: options.approvalTimeoutS, now, log: options.log, pendingWrites: options.pendingWrites, prepareAttachments: options.prepareAttachments, onApprovalsOpened: options.onApprovalsOpened, onApprovalsResolved: observeApprovalWaits };
  const runs = new Map<string, LocalRun>();
  /** Set when the process starts closing: a cancel from then on is the shutdown's. */
  let closing = false;
  const liveByConversation = new Map<string, RunHub>();
  const metrics = options.metrics ?? processMetrics();
  const untrackRunning = metrics.trackRunning(() => runs.size);

  /** The wait of each resolved approval, from its row (it may have been requested by an earlier run). */
  function observeApprovalWaits(resolved: ResolvedApproval[]): void {
    for (const { result, approval } of resolved) {
      if (approval.resolvedAt) metrics.approvalWait.observe({ result }, Math.max(0, (approval.resolvedAt.getTime() - approval.createdAt.getTime()) / 1000));
    }
  }

  /** A follower of a run, counted as an open stream while it lasts (metrics). */
  function follow(runId: string, conversationId: string): AsyncIterableIterator<LiveEvent> {
    return countedStream(followRun(runId, conversationId), { inc: () => metrics.openStreams.inc({ kind: 'run' }), dec: () => metrics.openStreams.dec({ kind: 'run' }) });
  }

  function followRun(runId: string, conversationId: string): AsyncIterableIterator<LiveEvent> {
    const local = runs.get(runId);
    if (!local) {
      // Finished, or running in another process: the ledger has (or will have) every event.
      return followLedger(ledger, conversationId, { after: 0, filter: (e) => e.run_id === runId, until: (e) => e.kind === 'run.finished' });
    }
    const queue = new EventQueue<LiveEvent>();
    const { missed, ended, unsubscribe } = local.hub.subscribe({ event: (e) => queue.push(e), end: (failure) => (failure === undefined ? queue.end() : queue.fail(failure)) });
    for (const e of missed) queue.push(e);
    if (ended) queue.end();
    queue.onReturn = unsubscribe;
    return queue;
  }

  function handle(run: Pick<Run, 'id' | 'conversationId'>, replayed: boolean): RunHandle {
    return {
      runId: run.id,
      conversationId: run.conversationId,
      replayed,
      events: () => follow(run.id, run.conversationId),
      cancel: () => stop(run.id),
      finished: () => runs.get(run.id)?.done ?? Promise.resolve(),
    };
  }

  /** Stops a run of this process (Stop, or the shutdown's when closing); false when none runs here. */
  function stop(runId: string): boolean {
    const local = runs.get(runId);
    local?.controller.abort(new RunAbort(closing ? 'shutdown' : 'cancelled'));
    return local !== undefined;
  }

  function start(run: Run, user: TurnUser, input: TurnContext['input'], opened: Pick<TurnContext, 'lease' | 'fresh' | 'setup' | 'unresumed'>, submittedAt: number): void {
    const controller = new AbortController();
    const hub = new RunHub(run.id, run.conversationId);
    const renew = setInterval(() => {
      renewRunLease(pool, { id: run.id, owner, leaseTtlS: options.leaseTtlS }).catch(() => {});
    }, (options.leaseTtlS * 1000) / 3);
    renew.unref();
    const done = (async () => {
      let failure: unknown;
      try {
        const observed = { submittedAt, firstToken: false };
        for await (const event of runTurn(deps, { runId: run.id, conversationId: run.conversationId, user, input, signal: controller.signal, ...opened })) {
          hub.publish(event);
          observe(metrics, observed, event);
        }
      } catch (error) {
        failure = toTurnError(error, run.id);
        metrics.errors.inc({ source: 'run', code: (failure as AirlockError).code });
        options.log.warn({ err: error, runId: run.id }, 'run stopped without committing its end');
      } finally {
        clearInterval(renew);
        hub.end(failure);
        runs.delete(run.id);
        if (liveByConversation.get(run.conversationId) === hub) liveByConversation.delete(run.conversationId);
      }
    })();
    runs.set(run.id, { hub, controller, done });
    liveByConversation.set(run.conversationId, hub);
  }

  type OpenedTurn = { run: Run; lease: ConversationLease; setup: TurnSetup; unresumed?: Promise<Approval[]> };
  type Opened = OpenedTurn | { replayed: RunHandle };
  type Submitted = TurnInput & { requestId: string };
  const prepare = (runId: string, conversationId: string, user: TurnUser, input: Submitted, fresh: boolean) =>
    options.prepareTurn?.({ runId, conversationId, userId: user.userId, requestId: input.requestId, action: input.action, fresh });
  /** A concurrent submit with the same request_id won the run insert: follow its run. */
  const replayWinner = async (lease: ConversationLease, user: TurnUser, input: Submitted, hash: string): Promise<Opened> => {
    await lease.release();
    return { replayed: await replay((await findRunByRequest(pool, { userId: user.userId, requestId: input.requestId }))!, hash) };
  };

  /**
   * An existing conversation: the owner check, its lease (BUSY if another run streams) and the run
   * row in one round trip; then the link, with the approvals lookup alongside.
   */
  async function openTurn(runId: string, conversationId: string, user: TurnUser, input: Submitted, hash: string): Promise<Opened> {
    const opened = await openExistingConversationTurn(pool, { userId: user.userId, conversationId, runId, requestId: input.requestId, requestHash: hash, owner, leaseTtlS: options.leaseTtlS });
    if (!opened.found) throw input.action ? new AirlockError('APPROVAL_NOT_FOUND') : new AirlockError('NOT_FOUND', 'This conversation does not exist.');
    if (!opened.leased) throw new AirlockError('CONVERSATION_BUSY');
    const lease = ConversationLease.held(pool, conversationId, runId, options.leaseTtlS);
    if (!opened.run) return replayWinner(lease, user, input, hash);
    // Read under the lease (taken above), while the turn is linked: no new pause can open meanwhile.
    const unresumed = readAhead(listUnresumedApprovals(pool, conversationId));
    return { ...(await linked(opened.run, lease, user, input, false)), unresumed };
  }

  /** A new conversation: the conversation, its lease and the run row in one round trip, then the link. */
  async function openFreshTurn(runId: string, user: TurnUser, input: Submitted, hash: string): Promise<Opened> {
    const text = input.text || 'Attachments';
    const opened = await openNewConversationTurn(pool, { userId: user.userId, text, runId, requestId: input.requestId, requestHash: hash, owner, leaseTtlS: options.leaseTtlS });
    const lease = ConversationLease.held(pool, opened.conversationId, runId, options.leaseTtlS);
    if (!opened.run) return replayWinner(lease, user, input, hash);
    return linked(opened.run, lease, user, input, true);
  }

  /** Links the opened turn (EngineOptions.prepareTurn); a refusal settles the run row and frees the conversation. */
  async function linked(run: Run, lease: ConversationLease, user: TurnUser, input: Submitted, fresh: boolean): Promise<OpenedTurn> {
    try {
      return { run, lease, setup: (await prepare(run.id, run.conversationId, user, input, fresh)) ?? {} };
    } catch (error) {
      await finishRun(pool, { id: run.id, status: 'failed' }).catch(() => {});
      await lease.release().catch(() => {});
      throw error;
    }
  }

  async function replay(existing: Run, hash: string): Promise<RunHandle> {
    if (replayDecision({ storedHash: existing.requestHash, hash }) === 'conflict') throw requestConflict();
    return handle(existing, true);
  }

  return {
    owner,

    /** Starts a turn, or finds the run of an earlier submit with the same request_id. */
    async submit(rawInput: TurnInput, user: TurnUser): Promise<RunHandle> {
      const submittedAt = performance.now();
      const storedPaths = await checkTurnInput(rawInput, options.files, user.userId);
      const input = { ...rawInput, requestId: rawInput.requestId ?? randomUUID() };
      const hash = requestHash(input);
      // Before the lease: a retry of a running turn must find it, never CONVERSATION_BUSY. (A key
      // we generated cannot have been used.)
      const existing = rawInput.requestId ? await findRunByRequest(pool, { userId: user.userId, requestId: input.requestId }) : null;
      if (existing) return replay(existing, hash);

      if (!input.conversationId && input.action) throw new AirlockError('APPROVAL_NOT_FOUND');
      const runId = randomUUID();
      const fresh = !input.conversationId;
      const opened = fresh
        ? await openFreshTurn(runId, user, input, hash)
        : await openTurn(runId, input.conversationId!, user, input, hash);
      if ('replayed' in opened) return opened.replayed;
      const { run, lease, setup, unresumed } = opened;
      start(run, user, { ...input, storedPaths }, { lease, fresh, setup, unresumed }, submittedAt);
      return handle(run, false);
    },

    /**
     * Stop for a conversation's running answer, whoever follows it (issue 30: a page reloaded
     * while its answer ran has no submission left to cancel). False when no run of it is here.
     */
    cancelConversation(conversationId: string): boolean {
      const hub = liveByConversation.get(conversationId);
      return hub !== undefined && stop(hub.runId);
    },

    /** The run streaming in this process for a conversation (for partial frames), if any. */
    liveRun(conversationId: string): RunHub | undefined {
      return liveByConversation.get(conversationId);
    },

    /**
     * Finishes orphaned runs now and every SWEEP_S (or lease period, when shorter) until `stop()`. A
     * killed peer is an orphan's owner at once (liveness.ts), so its runs settle within one sweep.
     */
    startRecovery(): { ready: Promise<string[]>; stop(): void } {
      // This process's own runs whose end waits for the database (pendingWrites) are written first:
      // after a long outage their leases have lapsed, and recovery would settle them as orphans with
      // an empty answer, the kept one then dropped as "settled elsewhere" (issue 30).
      const sweep = () =>
        Promise.resolve(options.pendingWrites?.flush?.())
          .then(() => recoverOrphanedRuns(pool, ledger))
          .catch((err) => (options.log.error({ err }, 'run recovery failed'), []));
      const timer = setInterval(sweep, Math.min(SWEEP_S, options.leaseTtlS) * 1000);
      timer.unref();
      return { ready: sweep(), stop: () => clearInterval(timer) };
    },

    /** The process is closing: transports that now cancel their runs do so for the shutdown. */
    closing(): void {
      closing = true;
    },

    /**
     * The shutdown's drain: the runs of this process may end by themselves until `deadline` (ms since
     * the epoch, the grace's end), whichever transport follows them; then the rest are stopped.
     */
    async drain(deadline: number): Promise<void> {
      closing = true;
      const left = deadline - Date.now();
      if (runs.size > 0 && left > 0) await settledOrTimeout([...runs.values()], left);
      await this.shutdown();
    },

    /**
     * Ends every run of this process with `error` (each commits it as its failure, its partial
     * answer kept) and waits for them: the process lost its liveness connection (liveness.ts), so
     * another may take these conversations over.
     */
    async abandon(error: AirlockError, timeoutMs = 5_000): Promise<void> {
      const pending = [...runs.values()];
      for (const run of pending) run.controller.abort(error);
      await settledOrTimeout(pending, timeoutMs);
    },

    /** Stops every run of this process (each commits cancelled/shutdown) and waits for them. */
    async shutdown(timeoutMs = 5_000): Promise<void> {
      closing = true;
      const pending = [...runs.values()];
      for (const run of pending) run.controller.abort(new RunAbort('shutdown'));
      await settledOrTimeout(pending, timeoutMs);
      untrackRunning();
    },
  };
}

/** Waits until every run is done or `ms` have passed. */
function settledOrTimeout(pending: LocalRun[], ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise((r) => (timer = setTimeout(r, ms)));
  return Promise.race([Promise.allSettled(pending.map((r) => r.done)), timeout]).finally(() => clearTimeout(timer));
}
