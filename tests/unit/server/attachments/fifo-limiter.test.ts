import { describe, expect, it } from 'vitest';
import { createFifoLimiter } from '../../../../server/attachments/fifo-limiter.ts';

/** A task the test finishes by hand, recording when it started. */
function gate(log: string[], name: string) {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    open = () => resolve(name);
    fail = reject;
  });
  return {
    task: () => {
      log.push(name);
      return done;
    },
    open,
    fail,
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('createFifoLimiter', () => {
  it('runs at most `concurrency` tasks at once and queues the rest', async () => {
    const limiter = createFifoLimiter(2);
    const started: string[] = [];
    const gates = ['a', 'b', 'c', 'd', 'e'].map((n) => gate(started, n));
    const results = gates.map((g) => limiter.run(g.task));
    await tick();
    expect(started).toEqual(['a', 'b']);
    expect([limiter.active, limiter.queued]).toEqual([2, 3]);
    gates[1].open();
    await tick();
    expect(started).toEqual(['a', 'b', 'c']);
    expect([limiter.active, limiter.queued]).toEqual([2, 2]);
    for (const g of gates) g.open();
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect([limiter.active, limiter.queued]).toEqual([0, 0]);
  });

  it('starts waiting tasks first come, first served, and never more than the cap, whatever order they finish in', async () => {
    const limiter = createFifoLimiter(3);
    const started: string[] = [];
    let running = 0;
    let most = 0;
    const names = Array.from({ length: 40 }, (_, i) => `t${i}`);
    await Promise.all(
      names.map((name, i) =>
        limiter.run(async () => {
          started.push(name);
          most = Math.max(most, ++running);
          // Finish out of order: later tasks are sometimes quicker.
          await new Promise((resolve) => setTimeout(resolve, (i * 7) % 5));
          running--;
        }),
      ),
    );
    expect(started).toEqual(names);
    expect(most).toBe(3);
  });

  it('a task arriving as a slot frees does not jump the queue', async () => {
    const limiter = createFifoLimiter(1);
    const started: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((n) => gate(started, n));
    const runs = [limiter.run(a.task), limiter.run(b.task)];
    await tick();
    a.open();
    runs.push(limiter.run(c.task)); // same tick as the release
    await tick();
    expect(started).toEqual(['a', 'b']);
    b.open();
    c.open();
    await Promise.all(runs);
    expect(started).toEqual(['a', 'b', 'c']);
  });

  it('a task that fails frees its slot and rejects only its own caller', async () => {
    const limiter = createFifoLimiter(1);
    const started: string[] = [];
    const [a, b] = ['a', 'b'].map((n) => gate(started, n));
    const first = limiter.run(a.task);
    const second = limiter.run(b.task);
    a.fail(new Error('boom'));
    await expect(first).rejects.toThrow('boom');
    b.open();
    await expect(second).resolves.toBe('b');
    expect(limiter.active).toBe(0);
  });

  it('a task that throws before returning a promise frees its slot too', async () => {
    const limiter = createFifoLimiter(1);
    await expect(limiter.run(() => { throw new Error('sync'); })).rejects.toThrow('sync');
    await expect(limiter.run(async () => 'next')).resolves.toBe('next');
  });

  it.each([0, -1, 1.5, NaN])('refuses a concurrency of %s', (n) => {
    expect(() => createFifoLimiter(n)).toThrow(RangeError);
  });
});
