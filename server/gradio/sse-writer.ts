/**
 * A thin SSE writer over a raw Node response: headers, write + uncork per frame, coalescing of
 * frames produced while the previous write is still in flight, a cap on what a slow client may
 * hold, close. No formatting (see encode.ts).
 * @module
 */
import type { ServerResponse } from 'node:http';

/** Headers every event stream carries (no compression, no proxy buffering). */
export const SSE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/** Writes frames to one response. */
export class SseWriter {
  #res: ServerResponse;
  #inflight = false;
  #pending = '';
  #closed = false;
  readonly #maxBuffered: number;
  readonly #afterWrite = () => this.#flushPending();

  constructor(res: ServerResponse, options: { maxBufferedBytes?: number } = {}) {
    this.#res = res;
    this.#maxBuffered = options.maxBufferedBytes ?? 8 * 1024 * 1024;
    res.once('close', () => {
      this.#closed = true;
    });
  }

  /** Sends status 200 and the SSE headers (plus `extra`) at once, so the client sees the stream open. */
  open(extra: Record<string, string> = {}): void {
    this.#res.writeHead(200, { ...SSE_HEADERS, ...extra });
    this.#res.flushHeaders();
  }

  get closed(): boolean {
    return this.#closed || this.#res.destroyed || this.#res.writableEnded;
  }

  /**
   * Queues a frame. Written at once when the socket is free; otherwise joined with the frames
   * that follow and written in one go when the previous write completes. A client that falls
   * more than maxBufferedBytes behind is disconnected.
   */
  write(frame: string): void {
    if (this.closed) return;
    if (this.#inflight) {
      this.#pending += frame;
      if (this.#pending.length > this.#maxBuffered) this.#res.destroy(new Error('SSE client too slow'));
      return;
    }
    this.#send(frame);
  }

  /** Writes `last` (if any) after everything queued, then ends the response. */
  end(last = ''): void {
    if (this.closed) return;
    const rest = this.#pending + last;
    this.#pending = '';
    this.#closed = true;
    if (rest) this.#res.end(rest);
    else this.#res.end();
    this.#uncork();
  }

  /** Drops the connection without a goodbye. */
  destroy(): void {
    this.#closed = true;
    this.#res.destroy();
  }

  #send(chunk: string): void {
    this.#inflight = true;
    this.#res.write(chunk, this.#afterWrite);
    // Node corks chunked responses until the next tick; flush this frame now.
    this.#uncork();
  }

  /**
   * Node (24, the one the project runs on) holds a chunked response's writes in the response
   * itself, corked until the next tick; that tick comes only once the microtask queue is empty,
   * which during a burst of tokens is the end of the burst. Uncorking the response sends the frame
   * now (and uncorks its socket); the socket is checked too for a Node that corks only the socket.
   */
  #uncork(): void {
    while (this.#res.writableCorked > 0) this.#res.uncork();
    const socket = this.#res.socket;
    if (socket && socket.writableCorked > 0) socket.uncork();
  }

  #flushPending(): void {
    this.#inflight = false;
    if (this.#pending && !this.closed) {
      const chunk = this.#pending;
      this.#pending = '';
      this.#send(chunk);
    }
  }
}
