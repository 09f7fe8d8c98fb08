/**
 * Open event streams: attaches a session's `/queue/data` stream to the bus, ends it with
 * close_stream once nothing is pending, aborts the session's handlers when the client drops it
 * early, sends heartbeats on one shared timer, and closes everything on shutdown.
 * @module
 */
import { CLOSE_STREAM_FRAME, encodeFrame, HEARTBEAT_FRAME, sessionNotFound } from './encode.ts';
import type { GradioQueue } from './queue.ts';
import type { Attachment } from './session-bus.ts';
import type { SseWriter } from './sse-writer.ts';

/** Heartbeat streams without a valid session held at once (each for one period at most). */
const MAX_TRANSIENT = 64;

interface SessionStream {
  writer: SseWriter;
  done: boolean;
  attachment: Attachment | null;
}

/** The Python client crashes on `unexpected_error`; it gets a bare close_stream instead. */
export function isPythonClient(userAgent: string | undefined): boolean {
  return /gradio_client|python-httpx|python-requests/i.test(userAgent ?? '');
}

/** The frames for a stream whose session is unknown (gradio-protocol.md §2.2). */
export function sessionNotFoundFrames(userAgent: string | undefined): string {
  return isPythonClient(userAgent) ? CLOSE_STREAM_FRAME : encodeFrame(sessionNotFound()) + CLOSE_STREAM_FRAME;
}

/** Owns every open stream of one plugin instance. */
export class StreamHub {
  readonly #sessions = new Map<string, SessionStream>();
  readonly #heartbeats = new Map<SseWriter, string | null>();
  /** Heartbeats served to callers without a valid session: ended after one period. */
  readonly #transient = new Map<SseWriter, NodeJS.Timeout>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly queue: GradioQueue,
    private readonly heartbeatMs: number,
    private readonly heartbeatsPerHolder = 8,
    private readonly aliveFrame = 'data: ALIVE\n\n',
  ) {
    this.#timer = setInterval(() => this.#beat(), heartbeatMs);
    this.#timer.unref();
  }

  /** Open session streams (for tests and metrics). */
  get openStreams(): number {
    return this.#sessions.size;
  }

  /** Serves `/queue/data` for a session on an opened writer. */
  async attachSession(sessionHash: string, writer: SseWriter, userAgent: string | undefined, onClose: (listener: () => void) => void): Promise<void> {
    const entry: SessionStream = { writer, done: false, attachment: null };
    let gone = false;
    const finish = () => {
      entry.done = true;
      entry.attachment?.detach();
      if (this.#sessions.get(sessionHash) === entry) this.#sessions.delete(sessionHash);
    };
    // Registered before the (asynchronous) attach: a client gone meanwhile is still noticed.
    onClose(() => {
      gone = true;
      if (entry.done || !entry.attachment) return;
      finish();
      // Dropped before the session finished: stop its handlers (no leak), as Gradio does.
      this.queue.abortSession(sessionHash, 'The client disconnected.');
    });
    const attachment = await this.queue.bus.attach(
      sessionHash,
      (message, pendingAfter) => {
        if (entry.done) return;
        if (message.terminal && pendingAfter === 0) {
          writer.end(message.frame + CLOSE_STREAM_FRAME);
          finish();
        } else if (message.frame) writer.write(message.frame);
      },
      // A newer stream for the same session (here or on another replica) took over: the client reconnected.
      () => {
        if (entry.done) return;
        entry.done = true;
        if (this.#sessions.get(sessionHash) === entry) this.#sessions.delete(sessionHash);
        writer.end();
      },
    );
    if (!attachment) {
      writer.end(sessionNotFoundFrames(userAgent));
      return;
    }
    this.queue.streamAttached(sessionHash);
    if (entry.done) {
      attachment.detach();
      return;
    }
    entry.attachment = attachment;
    if (gone) {
      finish();
      this.queue.abortSession(sessionHash, 'The client disconnected.');
      return;
    }
    this.#sessions.set(sessionHash, entry);
  }

  /** Resolves once no open stream waits for an event (on any replica), or at `deadline`. */
  async drained(deadline: number): Promise<void> {
    const waiting = () => [...this.#sessions.keys()].some((s) => this.queue.bus.pending(s) > 0);
    while (waiting() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }

  /**
   * Serves `/heartbeat/{session}`: ALIVE now and on every beat while the session is valid, i.e.
   * the caller is authenticated (`holder`: its owner key, null for an unbound app) and holds fewer
   * than `heartbeatsPerHolder` streams. Any other caller gets ALIVE and an end after one period:
   * never a 404, which makes the Python client spin, and a reconnect only at the heartbeat pace.
   * Past `MAX_TRANSIENT` of those at once, the stream ends right after ALIVE.
   */
  attachHeartbeat(writer: SseWriter, onClose: (listener: () => void) => void, valid: boolean, holder: string | null): void {
    writer.write(this.aliveFrame);
    const held = holder === null ? 0 : [...this.#heartbeats.values()].filter((h) => h === holder).length;
    if (valid && held < this.heartbeatsPerHolder) {
      this.#heartbeats.set(writer, holder);
      onClose(() => this.#heartbeats.delete(writer));
      return;
    }
    if (this.#transient.size >= MAX_TRANSIENT) {
      writer.end();
      return;
    }
    const timer = setTimeout(() => {
      this.#transient.delete(writer);
      writer.end();
    }, this.heartbeatMs);
    timer.unref();
    this.#transient.set(writer, timer);
    onClose(() => {
      clearTimeout(timer);
      this.#transient.delete(writer);
    });
  }

  /** Heartbeat streams held open (for tests and metrics). */
  get heldHeartbeats(): number {
    return this.#heartbeats.size;
  }

  /** Ends every stream: session streams get close_stream (so the JS client reconnects later). */
  closeAll(): void {
    clearInterval(this.#timer);
    for (const [, entry] of this.#sessions) {
      entry.done = true;
      entry.attachment?.detach();
      entry.writer.end(CLOSE_STREAM_FRAME);
    }
    this.#sessions.clear();
    for (const writer of this.#heartbeats.keys()) writer.end();
    this.#heartbeats.clear();
    for (const [writer, timer] of this.#transient) {
      clearTimeout(timer);
      writer.end();
    }
    this.#transient.clear();
  }

  #beat(): void {
    for (const entry of this.#sessions.values()) entry.writer.write(HEARTBEAT_FRAME);
    for (const writer of this.#heartbeats.keys()) writer.write(this.aliveFrame);
  }
}
