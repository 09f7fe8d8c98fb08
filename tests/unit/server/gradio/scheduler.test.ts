import { describe, expect, it } from 'vitest';
import { Scheduler } from '../../../../server/gradio/scheduler.ts';

const job = (log: string[], name: string, key?: string) => ({ name, key, start: () => log.push(name) });

describe('Scheduler', () => {
  it('runs up to the concurrency limit, queues FIFO, refuses beyond the queue size', () => {
    const log: string[] = [];
    const ranks: string[][] = [];
    const s = new Scheduler<ReturnType<typeof job>>(2, 4, (w) => ranks.push(w.map((j) => j.name)));
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((n) => job(log, n));
    expect([s.offer(a), s.offer(b), s.offer(c), s.offer(d), s.offer(e)]).toEqual(['started', 'started', 'queued', 'queued', 'full']);
    expect(log).toEqual(['a', 'b']);
    expect(s.rank(d)).toBe(1);
    s.release(a);
    expect(log).toEqual(['a', 'b', 'c']);
    expect(ranks.at(-1)).toEqual(['d']);
    expect(s.remove(d)).toBe(true);
    s.release(b);
    s.release(c);
    expect(log).toEqual(['a', 'b', 'c']);
    expect(s.running).toBe(0);
  });

  it("caps each key's share: one owner's flood neither fills the queue nor the slots for others", () => {
    const log: string[] = [];
    const s = new Scheduler<ReturnType<typeof job>>(3, 100, () => {}, { concurrency: 2, queueSize: 4 });
    const flood = ['a1', 'a2', 'a3', 'a4', 'a5'].map((n) => job(log, n, 'alice'));
    expect(flood.map((j) => s.offer(j))).toEqual(['started', 'started', 'queued', 'queued', 'key_full']);
    expect(s.refusal('alice')).toBe('key_full');
    expect(s.refusal('bob')).toBeNull();
    // bob starts at once although alice's jobs wait ahead of him: they wait for alice's share
    const b1 = job(log, 'b1', 'bob');
    expect(s.offer(b1)).toBe('started');
    expect(log).toEqual(['a1', 'a2', 'b1']);
    // bob's slot frees: alice is still at her cap, so nothing of hers starts
    s.release(b1);
    expect(log).toEqual(['a1', 'a2', 'b1']);
    // alice's job ends: her next waiting one starts (FIFO within her share)
    s.release(flood[0]);
    expect(log).toEqual(['a1', 'a2', 'b1', 'a3']);
    expect(s.offer(job(log, 'a6', 'alice'))).toBe('queued');
  });
});

describe('Scheduler without keys', () => {
  it('applies no share cap to keyless jobs (an app that binds no identities)', () => {
    const log: string[] = [];
    const s = new Scheduler<ReturnType<typeof job>>(2, 10, () => {}, { concurrency: 1, queueSize: 2 });
    const jobs = ['a', 'b', 'c', 'd'].map((n) => job(log, n));
    expect(jobs.map((j) => s.offer(j))).toEqual(['started', 'started', 'queued', 'queued']);
    expect(s.refusal(undefined)).toBeNull();
  });
});
