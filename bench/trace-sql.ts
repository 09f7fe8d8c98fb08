/**
 * BENCH_TRACE_SQL=1: prints every query the gateway process sends and every HTTP request it
 * receives (a wall-clock stamp that lines up across the bench's processes, ms since the previous
 * query, its duration, its first words), to see what sits between a submit and its first token.
 */
import { Server } from 'node:http';
import pg from 'pg';

/** Wall-clock ms (last 5 digits), comparable between processes on this machine. */
export const stamp = () => ((performance.timeOrigin + performance.now()) % 100_000).toFixed(2);

/** Marks a moment of the client's in the trace (the bench prints its submits and first tokens). */
export function traceMark(what: string): void {
  if (process.env.BENCH_TRACE_SQL) process.stderr.write(`${stamp()} mark ${what}\n`);
}

export function traceSql(): void {
  const emit = Server.prototype.emit as (...args: unknown[]) => boolean;
  Server.prototype.emit = function (this: Server, event: string, ...args: unknown[]) {
    if (event === 'request') {
      const req = args[0] as { method: string; url: string };
      process.stderr.write(`${stamp()} http ${req.method} ${req.url.slice(0, 80)}\n`);
    }
    return emit.call(this, event, ...args);
  } as typeof Server.prototype.emit;
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  let last = performance.now();
  (pg.Client.prototype as unknown as { query: unknown }).query = function (this: unknown, ...args: unknown[]) {
    const config = args[0] as string | { text?: string };
    const text = (typeof config === 'string' ? config : config?.text ?? '').replace(/\s+/g, ' ').slice(0, 90);
    const start = performance.now();
    const at = stamp();
    const gap = start - last;
    last = start;
    const print = () => process.stderr.write(`${at} sql +${gap.toFixed(2)}ms ${(performance.now() - start).toFixed(2)}ms ${text}\n`);
    const callback = args.at(-1);
    if (typeof callback === 'function') {
      // pool.query hands the client a callback: wrap it, so those queries are traced too
      args[args.length - 1] = (...r: unknown[]) => (print(), (callback as (...a: unknown[]) => unknown)(...r));
    }
    const result = original.apply(this, args);
    if (result && typeof (result as Promise<unknown>).then === 'function') void (result as Promise<unknown>).then(print, () => {});
    return result;
  };
}

/** Counts the queries this process sends (every pg client: the pools, the checkpointer's). */
export function countQueries(): () => number {
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  let count = 0;
  (pg.Client.prototype as unknown as { query: unknown }).query = function (this: unknown, ...args: unknown[]) {
    count++;
    return original.apply(this, args);
  };
  return () => count;
}
