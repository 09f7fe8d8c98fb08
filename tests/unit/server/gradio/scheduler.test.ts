import { describe, expect, it } from 'vitest';
import { Scheduler } from '../../../../server/gradio/scheduler.ts';

const job = (log: string[], name: string) => ({ name, start: () => log.push(name) });

describe('Scheduler', () => {
  it('runs up to the concurrency limit, queues FIFO, refuses beyond the queue size', () => {
    const log: string[] = [];
    const ranks: string[][] = [];
    const s = new Scheduler<ReturnType<typeof job>>(2, 4, (w) => ranks.push(w.map((j) => j.name)));
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((n) => job(log, n));
    expect([s.offer(a), s.offer(b), s.offer(c), s.offer(d), s.offer(e)]).toEqual(['started', 'started', 'queued', 'queued', 'full']);
    expect(log).toEqual(['a', 'b']);
    expect(s.rank(d)).toBe(1);
    s.release();
    expect(log).toEqual(['a', 'b', 'c']);
    expect(ranks.at(-1)).toEqual(['d']);
    expect(s.remove(d)).toBe(true);
    s.release();
    s.release();
    expect(log).toEqual(['a', 'b', 'c']);
    expect(s.running).toBe(0);
  });
});
