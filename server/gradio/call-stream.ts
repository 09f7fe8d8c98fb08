/**
 * An SseWriter that speaks the call API: the stream hub writes session frames as usual and this
 * writer turns them into named events on the way out (see call-format.ts), so the call API reuses
 * the whole session machinery (buffering before attach, heartbeats, abort on disconnect).
 * @module
 */
import type { ServerResponse } from 'node:http';
import { translateFrames, type CallState } from './call-format.ts';
import { SseWriter } from './sse-writer.ts';

/** Writes call-API frames for one event. */
export class CallStreamWriter extends SseWriter {
  readonly #state: CallState = { last: null };

  constructor(res: ServerResponse) {
    super(res);
  }

  override write(frame: string): void {
    const out = translateFrames(frame, this.#state);
    if (out) super.write(out);
  }

  override end(last = ''): void {
    super.end(translateFrames(last, this.#state));
  }
}
