/**
 * The runs of this process (engine.ts): each turn runs in the background with its own cancel
 * signal and a lease renewed while it runs; its events go to a TurnHub (live) as they commit to the
 * ledger (durable). Followers attach to the hub here, or follow the ledger when the run is not
 * (or no longer) here. Stop, shutdown and abandon reach runs through their signal.
 *
 *   start -> runTurn in the background -> TurnHub.publish (+ metrics) -> hub end, run forgotten
 *   follow -> the local hub (missed + live) | the ledger until run.finished
 * @module
 */
import type { ResolvedApproval } from '../approvals/decide.ts';
import type { Pool } from '../db/index.ts';
import { renewRunLease, type Run } from '../db/runs.ts';
import type { AirlockError } from '../errors.ts';
import type { Metrics } from '../metrics/index.ts';
import { EventQueue } from './event-queue.ts';
import type { LiveEvent } from './events.ts';
import { followLedger } from './follow.ts';
import type { Ledger } from './ledger.ts';
import { countedStream, observe } from './observe.ts';
import { TurnHub } from './turn-hub.ts';
import { TurnAbort, toTurnError } from './turn-errors.ts';
import { runTurn, type TurnContext, type TurnDeps } from './turn.ts';
import type { TurnUser } from './types.ts';

/** A run as a follower sees it. */
export interface TurnHandle {
  runId: string;
  conversationId: string;
  /** True when the submit found an earlier run with its request_id. */
  replayed: boolean;
  /**
   * Set when the submit was queued behind the running answer (turn-queue.ts): its place in the
   * queue (1: next) and the request id that removes it. events() then waits for its turn and follows it.
   */
  queued?: { position: number; requestId: string };
  /** The run's events from its start: committed, then live partials and commits, to run.finished. */
  events(): AsyncIterableIterator<LiveEvent>;
  /** Stop (the explicit user action). A no-op when the run is not running in this process. */
  cancel(): void;
  /** Settles when the run is no longer running in this process (at once when it never ran here). */
  finished(): Promise<void>;
}

interface LocalTurn {
  hub: TurnHub;
  controller: AbortController;
  done: Promise<void>;
}

export interface LocalRunsOptions {
  pool: Pool;
  ledger: Ledger;
  owner: string;
  leaseTtlS: number;
  metrics: Metrics;
  log: TurnDeps['log'];
  /** Told after a turn of this process ended (the conversation may start its next queued message). */
  onEnded?: (conversationId: string) => void;
  /** The turns' dependencies (onApprovalsResolved is added here: the approval-wait metric). */
  deps: Omit<TurnDeps, 'onApprovalsResolved'>;
}

export type StartedTurn = Pick<TurnContext, 'lease' | 'fresh' | 'setup' | 'unresumed' | 'branchAt'>;

export class LocalTurns {
  readonly #options: LocalRunsOptions;
  readonly #deps: TurnDeps;
  readonly #runs = new Map<string, LocalTurn>();
  readonly #liveByConversation = new Map<string, TurnHub>();
  readonly #untrackRunning: () => void;
  /** Set when the process starts closing: a cancel from then on is the shutdown's. */
  closing = false;

  constructor(options: LocalRunsOptions) {
    this.#options = options;
    this.#deps = { ...options.deps, onApprovalsResolved: (resolved) => this.#observeApprovalWaits(resolved) };
    this.#untrackRunning = options.metrics.trackRunning(() => this.#runs.size);
  }

  /** The wait of each resolved approval, from its row (it may have been requested by an earlier run). */
  #observeApprovalWaits(resolved: ResolvedApproval[]): void {
    for (const { result, approval } of resolved) {
      if (approval.resolvedAt) this.#options.metrics.approvalWait.observe({ result }, Math.max(0, (approval.resolvedAt.getTime() - approval.createdAt.getTime()) / 1000));
    }
  }

  /** Runs the turn in the background, its events published to a hub that followers attach to. */
  start(run: Run, user: TurnUser, input: TurnContext['input'], opened: StartedTurn, submittedAt: number): void {
    const { pool, owner, leaseTtlS, metrics, log } = this.#options;
    const controller = new AbortController();
    const hub = new TurnHub(run.id, run.conversationId);
    const renew = setInterval(() => {
      renewRunLease(pool, { id: run.id, owner, leaseTtlS }).catch(() => {});
    }, (leaseTtlS * 1000) / 3);
    renew.unref();
    const done = (async () => {
      let failure: unknown;
      try {
        const observed = { submittedAt, firstToken: false };
        for await (const event of runTurn(this.#deps, { runId: run.id, conversationId: run.conversationId, user, input, signal: controller.signal, ...opened })) {
          hub.publish(event);
          observe(metrics, observed, event);
        }
      } catch (error) {
        failure = toTurnError(error, run.id);
        metrics.errors.inc({ source: 'run', code: (failure as AirlockError).code });
        log.warn({ err: error, runId: run.id }, 'run stopped without committing its end');
      } finally {
        clearInterval(renew);
        hub.end(failure);
        this.#runs.delete(run.id);
        if (this.#liveByConversation.get(run.conversationId) === hub) this.#liveByConversation.delete(run.conversationId);
        this.#options.onEnded?.(run.conversationId);
      }
    })();
    this.#runs.set(run.id, { hub, controller, done });
    this.#liveByConversation.set(run.conversationId, hub);
  }

  handle(run: Pick<Run, 'id' | 'conversationId'>, replayed: boolean): TurnHandle {
    return {
      runId: run.id,
      conversationId: run.conversationId,
      replayed,
      events: () => this.#follow(run.id, run.conversationId),
      cancel: () => this.stop(run.id),
      finished: () => this.#runs.get(run.id)?.done ?? Promise.resolve(),
    };
  }

  /** Stops a run of this process (Stop, or the shutdown's when closing); false when none runs here. */
  stop(runId: string): boolean {
    const local = this.#runs.get(runId);
    local?.controller.abort(new TurnAbort(this.closing ? 'shutdown' : 'cancelled'));
    return local !== undefined;
  }

  /** The run streaming in this process for a conversation, if any. */
  live(conversationId: string): TurnHub | undefined {
    return this.#liveByConversation.get(conversationId);
  }

  /** The shutdown's drain: runs may end by themselves until `deadline` (ms since the epoch); then the rest are stopped. */
  async drain(deadline: number): Promise<void> {
    this.closing = true;
    const left = deadline - Date.now();
    if (this.#runs.size > 0 && left > 0) await settledOrTimeout([...this.#runs.values()], left);
    await this.shutdown();
  }

  /** Aborts every run of this process with `reason` and waits for them (at most `timeoutMs`). */
  async abortAll(reason: AirlockError | TurnAbort, timeoutMs: number): Promise<void> {
    const pending = [...this.#runs.values()];
    for (const run of pending) run.controller.abort(reason);
    await settledOrTimeout(pending, timeoutMs);
  }

  /** Stops every run (each commits cancelled/shutdown), waits for them, and stops counting runs. */
  async shutdown(timeoutMs = 5_000): Promise<void> {
    this.closing = true;
    await this.abortAll(new TurnAbort('shutdown'), timeoutMs);
    this.#untrackRunning();
  }

  /** A follower of a run, counted as an open stream while it lasts (metrics). */
  #follow(runId: string, conversationId: string): AsyncIterableIterator<LiveEvent> {
    const { metrics } = this.#options;
    return countedStream(this.#followRun(runId, conversationId), { inc: () => metrics.openStreams.inc({ kind: 'run' }), dec: () => metrics.openStreams.dec({ kind: 'run' }) });
  }

  #followRun(runId: string, conversationId: string): AsyncIterableIterator<LiveEvent> {
    const local = this.#runs.get(runId);
    if (!local) {
      // Finished, or running in another process: the ledger has (or will have) every event.
      return followLedger(this.#options.ledger, conversationId, { after: 0, filter: (e) => e.run_id === runId, until: (e) => e.kind === 'run.finished' });
    }
    const queue = new EventQueue<LiveEvent>();
    const { missed, ended, unsubscribe } = local.hub.subscribe({ event: (e) => queue.push(e), end: (failure) => (failure === undefined ? queue.end() : queue.fail(failure)) });
    for (const e of missed) queue.push(e);
    if (ended) queue.end();
    queue.onReturn = unsubscribe;
    return queue;
  }
}

/** Waits until every run is done or `ms` have passed. */
function settledOrTimeout(pending: LocalTurn[], ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise((r) => (timer = setTimeout(r, ms)));
  return Promise.race([Promise.allSettled(pending.map((r) => r.done)), timeout]).finally(() => clearTimeout(timer));
}
