/**
 * What the PostgreSQL bus puts on the wire, as pure functions: bus operations batched into NOTIFY
 * payloads under the limit, and the error completion that ends a dead replica's event.
 * @module
 */
import { encodeFrame, processFailed } from '../encode.ts';
import type { BusOp } from './mirror.ts';
import type { BusMessage } from './types.ts';

/** An error completion for an event whose replica died: the client may retry at once. */
export function orphanCompletion(
  eventId: string,
  error: { title: string; message: string } = { title: 'Server stopped', message: 'The server running this request stopped; please retry.' },
): BusMessage {
  return { eventId, frame: encodeFrame(processFailed(eventId, error.message, error.title)), terminal: true };
}

/** Largest NOTIFY payload sent (PostgreSQL refuses 8000 bytes and more). */
export const INLINE_MAX = 4000;
/** Splits ops into payloads of at most INLINE_MAX bytes; an op larger than that is a batch of its own (spilled). Pure. */
export function batchOps(ops: readonly BusOp[], max = INLINE_MAX): string[] {
  const batches: string[] = [];
  let current: string[] = [];
  let size = 2;
  for (const op of ops) {
    const json = JSON.stringify(op);
    const bytes = Buffer.byteLength(json) + 1;
    if (current.length > 0 && size + bytes > max) {
      batches.push(`[${current.join(',')}]`);
      current = [];
      size = 2;
    }
    current.push(json);
    size += bytes;
  }
  if (current.length > 0) batches.push(`[${current.join(',')}]`);
  return batches;
}

