/**
 * Server message -> SSE frame (`data: <one-line JSON>\n\n`). Pure. No comments, no `event:`/`id:`
 * lines: the Python client's strict parser rejects them. JSON.stringify escapes CR and LF, so a
 * frame is always one line plus the blank line.
 * @module
 */
import type { DiffOp, ErrorOutput, LogLevel, ProgressUnit, ServerMessage } from './types.ts';

/** Encodes one message as a frame. */
export function encodeFrame(message: ServerMessage): string {
  return `data: ${JSON.stringify(message)}\n\n`;
}

/** `estimation`: queued at `rank` among `queueSize` waiting events. */
export function estimation(eventId: string, rank: number, queueSize: number): ServerMessage {
  return { msg: 'estimation', event_id: eventId, rank, queue_size: queueSize, rank_eta: null };
}

/** `process_starts`: the handler runs. */
export function processStarts(eventId: string): ServerMessage {
  return { msg: 'process_starts', event_id: eventId, eta: null };
}

/** `process_generating` with full values (first yield) or one op list per output (later yields). */
export function processGenerating(eventId: string, data: unknown[] | DiffOp[][]): ServerMessage {
  return { msg: 'process_generating', event_id: eventId, success: true, output: { data, is_generating: true } };
}

/** Successful `process_completed` with full final values. */
export function processCompleted(eventId: string, data: unknown[]): ServerMessage {
  return { msg: 'process_completed', event_id: eventId, success: true, output: { data, is_generating: false } };
}

/** Error `process_completed`; `output` holds only the keys the Python client accepts. */
export function processFailed(eventId: string, error: string | null, title = 'Error'): ServerMessage {
  const output: ErrorOutput = { error, duration: null, visible: true, title };
  return { msg: 'process_completed', event_id: eventId, success: false, title, output };
}

/** `log`: Gradio's toast (gr.Info/gr.Warning); `duration` in seconds, null = until closed. */
export function logMessage(eventId: string, level: LogLevel, log: string, title?: string, duration: number | null = 10): ServerMessage {
  const defaultTitle = level === 'warning' ? 'Warning' : level === 'error' ? 'Error' : level === 'success' ? 'Success' : 'Info';
  return { msg: 'log', event_id: eventId, log, level, duration, visible: true, title: title ?? defaultTitle };
}

/** `progress`: every unit with all five keys, as Gradio's pydantic model dumps them. */
export function progressMessage(eventId: string, units: readonly ProgressUnit[]): ServerMessage {
  const progress_data = units.map((u) => ({
    index: u.index ?? null,
    length: u.length ?? null,
    unit: u.unit ?? null,
    progress: u.progress ?? null,
    desc: u.desc ?? null,
  }));
  return { msg: 'progress', event_id: eventId, progress_data };
}

/** The periodic keep-alive (a real data frame, never an SSE comment). */
export const HEARTBEAT_FRAME = encodeFrame({ msg: 'heartbeat', event_id: null });
/** Tells the client the session has nothing pending; it reopens the stream on its next submit. */
export const CLOSE_STREAM_FRAME = encodeFrame({ msg: 'close_stream', event_id: null });

/** For a stream whose session never joined (JS then fails its pending events cleanly). */
export function sessionNotFound(): ServerMessage {
  return { msg: 'unexpected_error', event_id: null, message: 'Session not found.', session_not_found: true, success: false };
}

/**
 * Hot path: the frame for a later `process_generating`, built without an intermediate message
 * object. Byte-identical to `encodeFrame(processGenerating(eventId, ops))`.
 */
export function encodeDiffFrame(eventIdJson: string, ops: DiffOp[][]): string {
  return `data: {"msg":"process_generating","event_id":${eventIdJson},"success":true,"output":{"data":${JSON.stringify(ops)},"is_generating":true}}\n\n`;
}
