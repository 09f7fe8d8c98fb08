/**
 * Call-API records held in one process (the memory bus): a bounded map whose entries expire. The
 * PostgreSQL bus keeps the same records in `gradio_bus_calls` so a GET on any replica finds them.
 * @module
 */
import type { CallRecord } from './types.ts';

/** Calls remembered for their GET; the oldest are forgotten past this (their events still end by orphan timeout). */
export const CALLS_LIMIT = 10_000;

export class CallRecords {
  readonly #calls = new Map<string, CallRecord & { expires: number }>();

  constructor(
    private readonly limit = CALLS_LIMIT,
    private readonly now: () => number = Date.now,
  ) {}

  put(eventId: string, call: CallRecord, ttlMs: number): void {
    this.#calls.set(eventId, { ...call, expires: this.now() + ttlMs });
    if (this.#calls.size > this.limit) this.#calls.delete(this.#calls.keys().next().value!);
  }

  /** One reader: the matching caller takes the session; a mismatch leaves the record in place. */
  take(eventId: string, apiName: string, owner: string | null): string | null {
    const call = this.#calls.get(eventId);
    if (!call) return null;
    if (call.expires <= this.now()) {
      this.#calls.delete(eventId);
      return null;
    }
    if (call.apiName !== apiName || call.owner !== owner) return null;
    this.#calls.delete(eventId);
    return call.sessionHash;
  }

  get size(): number {
    return this.#calls.size;
  }
}
