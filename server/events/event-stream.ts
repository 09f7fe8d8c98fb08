/**
 * One subscriber's conversation event stream: committed events after its cursor, each with
 * `id: <seq>`, then live. Seed 001: only a client that asked (`partials`) gets a run's answer
 * tokens, as `event: partial` frames without an id, never stored and never replayed: what streamed
 * before it attached is not sent as partials. One that also asked for `snapshot` (Airlock's
 * extension, so a tab can follow another's running answer) gets that segment so far ONCE on
 * attaching, as `event: partial_snapshot`; routes.ts never asks for it on a Last-Event-ID resume.
 * Commits of any process wake it through the ledger (LISTEN/NOTIFY). Transport-light: it writes
 * strings to a sink; routes.ts owns the HTTP.
 * @module
 */
import type { LedgerEvent, LiveEvent, Ledger, TurnHub } from '../engine/index.ts';
import { EventQueue } from '../engine/event-queue.ts';
import { sseComment, sseFrame } from '../http/sse-format.ts';

const PAGE = 500;

export interface EventStreamOptions {
  ledger: Ledger;
  conversationId: string;
  after: number;
  partials: boolean;
  /** With `partials`: the running answer's segment so far, once, on attaching to it. */
  snapshot: boolean;
  /** The run streaming in this process for the conversation, if any. */
  liveRun: () => TurnHub | undefined;
  heartbeatMs: number;
  write: (chunk: string) => void;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

export class EventStream {
  #cursor: number;
  /** Resolves the idle sleep (a commit, a drain, a lost client). */
  #wake: (() => void) | null = null;
  /** A commit was announced since the last catch-up began. */
  #dirty = false;
  /** Ends the live phase (a drain, a lost client). */
  #stop: (() => void) | null = null;
  #drainRetryAfterMs: number | null = null;
  readonly #o: EventStreamOptions;

  constructor(options: EventStreamOptions) {
    this.#o = options;
    this.#cursor = options.after;
  }

  /** Shutdown: send what is committed, then `event: drain`, then end. */
  drain(retryAfterMs: number): void {
    this.#drainRetryAfterMs = retryAfterMs;
    this.#wake?.();
    this.#stop?.();
  }

  async run(): Promise<void> {
    const { ledger, conversationId, signal } = this.#o;
    const wake = () => {
      this.#dirty = true;
      this.#wake?.();
    };
    const abort = () => (this.#wake?.(), this.#stop?.());
    const unsubscribe = ledger.subscribe(conversationId, wake);
    signal.addEventListener('abort', abort);
    const heartbeat = setInterval(() => this.#o.write(sseComment('heartbeat')), this.#o.heartbeatMs);
    try {
      while (!signal.aborted) {
        await this.#catchUp();
        if (this.#drainRetryAfterMs !== null) break;
        const hub = this.#o.partials ? this.#o.liveRun() : undefined;
        if (hub && !hub.finished) await this.#followRun(hub);
        else await this.#sleep(5_000); // a notification normally wakes us long before
      }
      if (this.#drainRetryAfterMs !== null && !signal.aborted) {
        await this.#catchUp();
        this.#o.write(sseFrame({ event: 'drain', data: { retry_after_ms: this.#drainRetryAfterMs } }));
      }
    } finally {
      clearInterval(heartbeat);
      signal.removeEventListener('abort', abort);
      unsubscribe();
    }
  }

  #commit(event: LedgerEvent): void {
    if (event.seq <= this.#cursor) return; // nothing twice
    this.#cursor = event.seq;
    this.#o.write(sseFrame({ id: event.seq, event: event.kind, data: event.payload }));
  }

  async #catchUp(): Promise<void> {
    this.#dirty = false;
    for (;;) {
      const page = await this.#o.ledger.read(this.#o.conversationId, { after: this.#cursor, limit: PAGE });
      page.forEach((e) => this.#commit(e));
      if (page.length < PAGE) return;
    }
  }

  /**
   * Live from the run's hub: subscribe first (buffering), catch up from the ledger, then play
   * the buffer. The hub's answer so far (the last of `missed`) is dropped, or kept as the
   * snapshot when asked for. Partials wait for the next commit or an empty buffer; a commit the
   * cursor has passed discards the partials before it (the ledger already gave their whole message).
   */
  async #followRun(hub: TurnHub): Promise<void> {
    const queue = new EventQueue<LiveEvent>();
    const { missed, ended, unsubscribe } = hub.subscribe({ event: (e) => queue.push(e), end: () => queue.end() }, this.#cursor);
    const soFar = missed.at(-1)?.kind === 'partial' ? missed.pop() : undefined;
    missed.forEach((e) => queue.push(e));
    // Pushed last, like the hub's own order: it follows the run's committed events.
    let snapshotNext = this.#o.snapshot && soFar !== undefined;
    if (snapshotNext) queue.push(soFar!);
    if (ended) queue.end();
    this.#stop = () => queue.end();
    const send = (token: string) => {
      this.#o.write(sseFrame({ event: snapshotNext ? 'partial_snapshot' : 'partial', data: { run_id: hub.runId, token } }));
      snapshotNext = false;
    };
    try {
      await this.#catchUp();
      let partial = '';
      for (;;) {
        if (partial && queue.pending === 0) {
          send(partial);
          partial = '';
        }
        const { value, done } = await queue.next();
        if (done || this.#o.signal.aborted || this.#drainRetryAfterMs !== null) break;
        if (value.kind === 'partial') partial += value.payload.token;
        else {
          if (value.seq > this.#cursor && partial) send(partial);
          partial = '';
          snapshotNext = false; // a snapshot the ledger made whole is not sent
          this.#commit(value);
        }
      }
    } finally {
      this.#stop = null;
      unsubscribe();
    }
  }

  /** Waits for a wake-up, unless one came while we were reading (then there is news already). */
  async #sleep(ms: number): Promise<void> {
    if (this.#dirty) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = null;
  }
}
