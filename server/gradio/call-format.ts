/**
 * The curl call API's stream (`GET /gradio_api/call/{api}/{event_id}`): session frames turned
 * into upstream's named events (`event: generating|complete|error|heartbeat`, `data:` one JSON
 * value). Generating events carry the full values (upstream's `simple_format`), so diffs are
 * applied here. Estimation, process_starts, log, progress and close_stream have no call-API form
 * and are dropped, as upstream does. Pure but for the per-event `CallState`.
 * @module
 */
import { applyOps } from './diff.ts';
import type { DiffOp } from './types.ts';

/** What one call stream remembers: the last full output values. */
export interface CallState {
  last: unknown[] | null;
}

const named = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** One session message (parsed JSON) -> the call-API frame, or '' when it has none. */
export function callFrame(message: Record<string, any>, state: CallState): string {
  switch (message.msg) {
    case 'process_generating': {
      const data = message.output?.data as unknown[];
      // The first generating message holds full values, later ones one op list per output.
      state.last = state.last === null ? data : state.last.map((value, i) => applyOps(value, data[i] as DiffOp[]));
      return named('generating', state.last);
    }
    case 'process_completed':
      return message.success ? named('complete', message.output?.data ?? null) : named('error', message.output ?? null);
    case 'heartbeat':
      return named('heartbeat', null);
    case 'unexpected_error':
      return named('error', message.message ?? null);
    default:
      return '';
  }
}

/** One call-API frame and its event name. */
export interface CallFrame {
  event: string;
  frame: string;
}

/** Each call-API frame of a chunk of `data: {...}\n\n` frames (one or several, as the stream hub writes them). */
export function callFrames(chunk: string, state: CallState): CallFrame[] {
  const out: CallFrame[] = [];
  for (const block of chunk.split('\n\n')) {
    if (!block.startsWith('data: ')) continue;
    let message: unknown;
    try {
      message = JSON.parse(block.slice('data: '.length));
    } catch {
      continue; // not a JSON message (the heartbeat route's ALIVE never comes here)
    }
    if (!message || typeof message !== 'object') continue;
    const frame = callFrame(message as Record<string, any>, state);
    if (frame) out.push({ event: frame.slice('event: '.length, frame.indexOf('\n')), frame });
  }
  return out;
}

/** Translates a chunk of session frames into call-API frames, joined. */
export function translateFrames(chunk: string, state: CallState): string {
  return callFrames(chunk, state)
    .map((f) => f.frame)
    .join('');
}

/** The error event that ends a call stream whose answer grew past `maxBytes` (issue 30 finding 12). */
export function tooLargeFrame(maxBytes: number): string {
  const message = `The answer grew past what the call API streams (${maxBytes} bytes per event), so it was stopped here.`;
  return named('error', { error: message, code: 'PAYLOAD_TOO_LARGE', title: 'Error' });
}
