/**
 * The event queue: joins go through each endpoint's scheduler, runs publish to the session bus,
 * cancels and lost clients abort handlers, shutdown ends every open event with a terminal message.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { encodeFrame, estimation } from './encode.ts';
import { RequestRejectedError } from './errors.ts';
import { EventRun, type RunLogger } from './event-runner.ts';
import { mayCancel, sessionKey, type CancelClaim, type OwnerKey } from './ownership.ts';
import { Scheduler, type Job } from './scheduler.ts';
import type { CancelOutcome, SessionBus } from './session-bus.ts';
import type { EndpointDefinition } from './types.ts';

/** A joined event: a scheduler job around its run. `sessionHash` is the bus key (owner-scoped). */
class QueuedEvent implements Job {
  started = false;
  readonly key: string | undefined;
  constructor(
    readonly run: EventRun,
    readonly sessionHash: string,
    readonly owner: OwnerKey,
    private readonly onStart: (event: QueuedEvent) => void,
  ) {
    this.key = owner ?? undefined;
  }
  get id(): string {
    return this.run.request.eventId;
  }
  start(): void {
    this.started = true;
    this.onStart(this);
  }
}

/** What a join carries once validated. */
export interface JoinRequest {
  fnIndex: number;
  sessionHash: string;
  /** The client's own session when the event runs in another (a curl call): the handler's `clientSessionHash`. */
  clientSessionHash?: string;
  data: unknown[];
  eventData: unknown;
  identity: unknown;
  /** The identity's owner key (null: unbound app). */
  owner: OwnerKey;
  headers: Record<string, string | string[] | undefined>;
}

/** Queue settings. */
export interface QueueOptions {
  bus: SessionBus;
  orphanTimeoutMs: number;
  log?: RunLogger;
}

/** The queue of one plugin instance. */
export class GradioQueue {
  readonly #endpoints: { def: EndpointDefinition; scheduler: Scheduler }[];
  readonly #events = new Map<string, QueuedEvent>();
  readonly #bySession = new Map<string, Set<QueuedEvent>>();
  readonly #orphanTimers = new Map<string, NodeJS.Timeout>();
  #closing = false;

  constructor(
    endpoints: readonly EndpointDefinition[],
    private readonly options: QueueOptions,
  ) {
    this.#endpoints = endpoints.map((def) => {
      const scheduler = new Scheduler(
        def.concurrencyLimit ?? 64,
        def.queueSize ?? 1000,
        (waiting) =>
          waiting.forEach((event, rank) => {
            if (event instanceof QueuedEvent) this.#publish(event, encodeFrame(estimation(event.id, rank, waiting.length)), false);
          }),
        { concurrency: def.userConcurrencyLimit ?? Infinity, queueSize: def.userQueueSize ?? Infinity },
      );
      return { def, scheduler };
    });
    options.bus.onCancel((eventId) => {
      const event = this.#events.get(eventId);
      if (event) this.#cancelHere(event);
    });
    // A replica dropped the session (its stream went away): its events here stop too, as Gradio does.
    options.bus.onForgotten((sessionHash) => this.#disconnectHere(sessionHash, 'The client disconnected.'));
  }

  get bus(): SessionBus {
    return this.options.bus;
  }

  /** Whether shutdown began. */
  get closing(): boolean {
    return this.#closing;
  }

  /** Events joined and not yet settled (running or waiting). */
  get size(): number {
    return this.#events.size;
  }

  /** Queues an event; returns its id. Throws 503 when the endpoint's queue is full or the server closes, 429 past the owner's share. */
  async join(request: JoinRequest): Promise<string> {
    const { scheduler, def } = this.admit(request.fnIndex, request.owner);
    const eventId = randomUUID().replaceAll('-', '');
    const sessionHash = sessionKey(request.sessionHash, request.owner);
    const run: EventRun = new EventRun(
      {
        data: request.data,
        eventData: request.eventData,
        identity: request.identity,
        headers: request.headers,
        sessionHash: request.sessionHash,
        ...(request.clientSessionHash ? { clientSessionHash: request.clientSessionHash } : {}),
        eventId,
      },
      def,
      (message) => this.options.bus.publish(sessionHash, message),
      this.options.log,
    );
    const event = new QueuedEvent(run, sessionHash, request.owner, (e) => this.#start(e, scheduler));
    // Registered on the bus first: a stream or a cancel may reach another replica right after.
    await this.options.bus.addEvent(sessionHash, eventId, { owner: request.owner, sessionHash: request.sessionHash });
    // Admission again: the await let others in (or shutdown begin).
    try {
      this.admit(request.fnIndex, request.owner);
    } catch (error) {
      // Withdrawn from the bus: an empty terminal message clears it everywhere, writes nothing.
      this.options.bus.publish(sessionHash, { eventId, frame: '', terminal: true });
      throw error;
    }
    this.#events.set(eventId, event);
    let set = this.#bySession.get(sessionHash);
    if (!set) this.#bySession.set(sessionHash, (set = new Set()));
    set.add(event);
    this.#watchOrphan(sessionHash);

    const startsNow = scheduler.running < scheduler.concurrencyLimit && scheduler.waiting.length === 0;
    const rank = startsNow ? 0 : scheduler.waiting.length;
    this.#publish(event, encodeFrame(estimation(eventId, rank, rank + 1)), false);
    scheduler.offer(event);
    return eventId;
  }

  /**
   * Cancels an event when the claim allows it (see `mayCancel`). 'unknown' for an event that does
   * not exist or has finished; 'refused' when it exists but the caller may not touch it.
   */
  async cancel(eventId: string, claim: CancelClaim): Promise<CancelOutcome> {
    const event = this.#events.get(eventId);
    // Not here: another replica may run it (the bus checks the claim and fans the cancel out).
    if (!event) return this.options.bus.cancelRemote(eventId, claim);
    if (!mayCancel({ owner: event.owner, sessionHash: event.run.request.sessionHash }, claim)) return 'refused';
    this.#cancelHere(event);
    return 'cancelled';
  }

  /** Cancels an event of this process (the claim was checked where the cancel arrived). */
  #cancelHere(event: QueuedEvent): void {
    if (!event.started) {
      this.#endpointOf(event).scheduler.remove(event);
      event.run.cancel();
      this.#settle(event);
    } else event.run.cancel();
  }

  /**
   * Ends every open event of a session with an error (its stream dropped or never came). A
   * disconnect, not a cancel: only the handlers' connection signal fires.
   */
  abortSession(sessionHash: string, reason: string): void {
    this.#disconnectHere(sessionHash, reason);
    this.options.bus.forget(sessionHash);
  }

  /** Disconnects this process's events of a session (another replica may run others). */
  #disconnectHere(sessionHash: string, reason: string): void {
    for (const event of [...(this.#bySession.get(sessionHash) ?? [])]) {
      if (!event.started) {
        this.#endpointOf(event).scheduler.remove(event);
        event.run.disconnect(new Error(reason));
        this.#settle(event);
      } else event.run.disconnect(new Error(reason));
    }
  }

  /** A stream attached for the session: it is no longer an orphan. */
  streamAttached(sessionHash: string): void {
    const timer = this.#orphanTimers.get(sessionHash);
    if (timer) clearTimeout(timer);
    this.#orphanTimers.delete(sessionHash);
  }

  /** Refuses new joins, lets running events finish for up to `drainMs`, then stops the rest. */
  async shutdown(drainMs: number): Promise<void> {
    this.#closing = true;
    const deadline = Date.now() + drainMs;
    while (this.#events.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const error = Object.assign(new Error('The server is shutting down; please retry.'), { title: 'Server stopped' });
    for (const event of [...this.#events.values()]) {
      if (!event.started) this.#endpointOf(event).scheduler.remove(event);
      event.run.stop(error);
      if (!event.started) this.#settle(event);
    }
    for (const timer of this.#orphanTimers.values()) clearTimeout(timer);
    this.#orphanTimers.clear();
  }

  /** The endpoint, once it may take one more job of this owner; throws the refusal otherwise. */
  admit(fnIndex: number, owner: OwnerKey): { def: EndpointDefinition; scheduler: Scheduler } {
    if (this.#closing) throw new RequestRejectedError(503, 'The server is shutting down.', 'SHUTTING_DOWN');
    const endpoint = this.#endpoints[fnIndex];
    const refused = endpoint.scheduler.refusal(owner ?? undefined);
    if (refused === 'full') throw new RequestRejectedError(503, 'Queue is full.', 'QUEUE_FULL');
    // 429, not 503: the queue has room for others; this owner should wait for its own events.
    if (refused === 'key_full') throw new RequestRejectedError(429, 'Too many events of yours are queued or running; wait for one to finish.', 'USER_QUEUE_FULL');
    return endpoint;
  }

  #start(event: QueuedEvent, scheduler: Scheduler): void {
    void event.run.run().finally(() => {
      scheduler.release(event);
      this.#settle(event);
    });
  }

  #settle(event: QueuedEvent): void {
    this.#events.delete(event.id);
    const set = this.#bySession.get(event.sessionHash);
    set?.delete(event);
    if (set && set.size === 0) this.#bySession.delete(event.sessionHash);
  }

  #endpointOf(event: QueuedEvent) {
    return this.#endpoints.find((e) => e.def === event.run.endpoint)!;
  }

  #publish(event: QueuedEvent, frame: string, terminal: boolean): void {
    this.options.bus.publish(event.sessionHash, { eventId: event.id, frame, terminal });
  }

  #watchOrphan(sessionHash: string): void {
    if (this.options.bus.attached(sessionHash) || this.#orphanTimers.has(sessionHash)) return;
    const timer = setTimeout(() => {
      this.#orphanTimers.delete(sessionHash);
      if (!this.options.bus.attached(sessionHash)) this.abortSession(sessionHash, 'No event stream connected.');
    }, this.options.orphanTimeoutMs);
    timer.unref();
    this.#orphanTimers.set(sessionHash, timer);
  }
}
