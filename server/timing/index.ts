/**
 * Where a request's time went (issue 28 item 6): queue (until its turn started), model (model
 * calls, request to last byte), tools (tool calls), db (every query on a pool made by createPool),
 * total. A meter lives in an AsyncLocalStorage entered once per HTTP request (app.ts), so the parts
 * that spend the time add to it with no plumbing: the pool's clients (db/pool.ts), the model's
 * fetch (agent/model.ts), the engine's turn (queue mark, tool ends). Answers that are not streamed
 * send it as `Server-Timing`; the v1 completion also as `timings`. With no meter (work outside a
 * request) every call is one AsyncLocalStorage lookup. A leaf.
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';

export type TimingPart = 'model' | 'tools' | 'db';

export interface Timings {
  queue: number;
  model: number;
  tools: number;
  db: number;
  total: number;
}

interface Meter {
  start: number;
  queue: number | null;
  parts: Record<TimingPart, number>;
}

const meters = new AsyncLocalStorage<Meter>();

/** Runs `fn` (and everything it starts) with a fresh meter. */
export function withMeter<T>(fn: () => T): T {
  return meters.run({ start: performance.now(), queue: null, parts: { model: 0, tools: 0, db: 0 } }, fn);
}

/** Adds `ms` to a part of the current request's time (nothing outside a request). */
export function addTiming(part: TimingPart, ms: number): void {
  const meter = meters.getStore();
  if (meter) meter.parts[part] += ms;
}

/** A function that adds the time since now to `part` when called (null outside a request: nothing to time). */
export function startTiming(part: TimingPart): (() => void) | null {
  const meter = meters.getStore();
  if (!meter) return null;
  const t0 = performance.now();
  return () => void (meter.parts[part] += performance.now() - t0);
}

/** The request's turn starts now: the time before it is its queue (the first mark counts). */
export function markTurnStart(): void {
  const meter = meters.getStore();
  if (meter && meter.queue === null) meter.queue = performance.now() - meter.start;
}

/** The current request's timings so far, in milliseconds (null outside a request). */
export function currentTimings(): Timings | null {
  const meter = meters.getStore();
  if (!meter) return null;
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return {
    queue: round(meter.queue ?? 0),
    model: round(meter.parts.model),
    tools: round(meter.parts.tools),
    db: round(meter.parts.db),
    total: round(performance.now() - meter.start),
  };
}

/** Pure: the `Server-Timing` header value of some timings. */
export function serverTimingHeader(t: Timings): string {
  return (Object.keys(t) as (keyof Timings)[]).map((k) => `${k};dur=${t[k]}`).join(', ');
}
