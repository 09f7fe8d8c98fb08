/**
 * An SseWriter that speaks the call API: the stream hub writes session frames as usual and this
 * writer turns them into named events on the way out (see call-format.ts), so the call API reuses
 * the whole session machinery (buffering before attach, heartbeats, abort on disconnect).
 *
 * Every `generating` event repeats the whole output (upstream's format), so a long answer is many
 * large events (issue 30 finding 12). The writer waits for the client rather than cutting it off:
 * once the client is 1 MiB behind, a queued snapshot is replaced by the newer one (nothing is
 * lost, each holds everything), and a heartbeat while frames wait is dropped. One event past `maxBytes` ends the stream with an
 * `error` event (code PAYLOAD_TOO_LARGE), which also aborts the event, as a client leaving does.
 * @module
 */
import type { ServerResponse } from 'node:http';
import { callFrames, tooLargeFrame, type CallState } from './call-format.ts';
import { SseWriter } from './sse-writer.ts';

/** The default of `callStreamMaxBytes` (CALL_STREAM_MAX_BYTES): 8 MiB. */
export const CALL_STREAM_MAX_BYTES = 8 * 1024 * 1024;

/** How far behind a client may fall before queued snapshots are replaced by newer ones. */
const SUPERSEDE_ABOVE_BYTES = 1024 * 1024;

/** Writes call-API frames for one event. */
export class CallStreamWriter extends SseWriter {
  readonly #state: CallState = { last: null };
  readonly #maxBytes: number;

  constructor(res: ServerResponse, options: { maxBytes?: number } = {}) {
    const maxBytes = options.maxBytes ?? CALL_STREAM_MAX_BYTES;
    // A client up to 1 MiB behind gets every event (as upstream); further behind, only the newest
    // snapshot waits, so pending stays under 1 MiB + two events: the cut is never reached.
    super(res, { supersedeAboveBytes: SUPERSEDE_ABOVE_BYTES, maxBufferedBytes: SUPERSEDE_ABOVE_BYTES + 4 * maxBytes + 1024 * 1024 });
    this.#maxBytes = maxBytes;
  }

  override write(chunk: string): void {
    for (const { event, frame } of callFrames(chunk, this.#state)) {
      if (this.closed) return;
      if (Buffer.byteLength(frame) > this.#maxBytes) return super.end(tooLargeFrame(this.#maxBytes));
      if (event === 'heartbeat' && this.backlogged) continue;
      super.write(frame, event === 'generating' ? 'generating' : undefined);
    }
  }

  override end(last = ''): void {
    if (this.closed) return;
    const frames = callFrames(last, this.#state).map((f) => f.frame);
    if (frames.some((frame) => Buffer.byteLength(frame) > this.#maxBytes)) return super.end(tooLargeFrame(this.#maxBytes));
    super.end(frames.join(''));
  }
}
