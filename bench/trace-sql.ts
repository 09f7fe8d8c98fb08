/**
 * BENCH_TRACE_SQL=1: prints every query the gateway process sends (ms since the previous one,
 * its duration, its first words), to see what sits between a submit and its first token.
 */
import pg from 'pg';

export function traceSql(): void {
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  let last = performance.now();
  (pg.Client.prototype as unknown as { query: unknown }).query = function (this: unknown, ...args: unknown[]) {
    const config = args[0] as string | { text?: string };
    const text = (typeof config === 'string' ? config : config?.text ?? '').replace(/\s+/g, ' ').slice(0, 90);
    const start = performance.now();
    const gap = start - last;
    last = start;
    const print = () => process.stderr.write(`sql +${gap.toFixed(2)}ms ${(performance.now() - start).toFixed(2)}ms ${text}\n`);
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
