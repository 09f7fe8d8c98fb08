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
  readonly #heartbeats = new Set<SseWriter>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly queue: GradioQueue,
    heartbeatMs: number,
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
  attachSession(sessionHash: string, writer: SseWriter, userAgent: string | undefined, onClose: (listener: () => void) => void): void {
    const previous = this.#sessions.get(sessionHash);
    const entry: SessionStream = { writer, done: false, attachment: null };
    const finish = () => {
      entry.done = true;
      entry.attachment?.detach();
      if (this.#sessions.get(sessionHash) === entry) this.#sessions.delete(sessionHash);
    };
    const attachment = this.queue.bus.attach(sessionHash, (message, pendingAfter) => {
      if (entry.done) return;
      if (message.terminal && pendingAfter === 0) {
        writer.end(message.frame + CLOSE_STREAM_FRAME);
        finish();
      } else writer.write(message.frame);
    });
    if (!attachment) {
      writer.end(sessionNotFoundFrames(userAgent));
      return;
    }
    if (previous && !previous.done) {
      // A newer stream for the same session replaces the older one (the client reconnected).
      previous.done = true;
      previous.writer.end();
    }
    this.queue.streamAttached(sessionHash);
    if (entry.done) {
      attachment.detach();
      return;
    }
    entry.attachment = attachment;
    this.#sessions.set(sessionHash, entry);
    onClose(() => {
      if (entry.done) return;
      finish();
      // Dropped before the session finished: stop its handlers (no leak), as Gradio does.
      this.queue.abortSession(sessionHash, 'The client disconnected.');
    });
  }

  /** Serves `/heartbeat/{session}`: ALIVE now and on every beat. */
  attachHeartbeat(writer: SseWriter, onClose: (listener: () => void) => void): void {
    writer.write(this.aliveFrame);
    this.#heartbeats.add(writer);
    onClose(() => this.#heartbeats.delete(writer));
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
    for (const writer of this.#heartbeats) writer.end();
    this.#heartbeats.clear();
  }

  #beat(): void {
    for (const entry of this.#sessions.values()) entry.writer.write(HEARTBEAT_FRAME);
    for (const writer of this.#heartbeats) writer.write(this.aliveFrame);
  }
}
