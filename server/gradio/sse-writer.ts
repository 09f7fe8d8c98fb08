/**
 * A thin SSE writer over a raw Node response: headers, write + uncork per frame, coalescing of
 * frames produced while the previous write is still in flight (a full snapshot replacing the
 * queued one it supersedes), a cap on what a slow client may hold, close. No formatting (see encode.ts).
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
  /** The key of the last frame in #pending and where it starts: a newer frame of that key replaces it. */
  #tailKey: string | null = null;
  #tailStart = 0;
  #closed = false;
  readonly #maxBuffered: number;
  readonly #supersedeAbove: number;
  readonly #afterWrite = () => this.#flushPending();

  /**
   * `supersedeAboveBytes`: how far behind a client falls before queued frames with a `supersedes`
   * key are replaced (default 0: at once); below it, every frame reaches the client.
   */
  constructor(res: ServerResponse, options: { maxBufferedBytes?: number; supersedeAboveBytes?: number } = {}) {
    this.#res = res;
    this.#maxBuffered = options.maxBufferedBytes ?? 8 * 1024 * 1024;
    this.#supersedeAbove = options.supersedeAboveBytes ?? 0;
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

  /** A write is in flight: what is written now waits for the client. */
  get backlogged(): boolean {
    return this.#inflight;
  }

  /**
   * Queues a frame. Written at once when the socket is free; otherwise joined with the frames
   * that follow and written in one go when the previous write completes. A frame with a
   * `supersedes` key replaces a still-queued frame of the same key at the tail once the client is
   * `supersedeAboveBytes` behind (a full snapshot makes the older one useless): a slow client then
   * gets fewer frames, never a cut stream.
   * A client that falls more than maxBufferedBytes behind is disconnected.
   */
  write(frame: string, supersedes?: string): void {
    if (this.closed) return;
    if (this.#inflight) {
      if (supersedes !== undefined && supersedes === this.#tailKey && this.#pending.length >= this.#supersedeAbove) this.#pending = this.#pending.slice(0, this.#tailStart) + frame;
      else {
        this.#tailStart = this.#pending.length;
        this.#pending += frame;
      }
      this.#tailKey = supersedes ?? null;
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
    this.#tailKey = null;
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
      this.#tailKey = null;
      this.#send(chunk);
    }
  }
}
