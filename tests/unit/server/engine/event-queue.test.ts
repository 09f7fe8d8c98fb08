import { describe, expect, it } from 'vitest';
import { EventQueue } from '../../../../server/engine/event-queue.ts';

describe('EventQueue', () => {
  it('delivers pushes in order, waits when empty, ends after the queued items', async () => {
    const q = new EventQueue<number>();
    q.push(1);
    const next = q.next();
    expect(await next).toEqual({ value: 1, done: false });
    const waiting = q.next();
    q.push(2);
    q.end();
    q.push(3); // after end: dropped
    expect(await waiting).toEqual({ value: 2, done: false });
    expect(await q.next()).toEqual({ value: undefined, done: true });
  });

  it('fail() ends with the error once the queued items are read', async () => {
    const q = new EventQueue<string>();
    q.push('a');
    q.fail(new Error('database away'));
    expect(await q.next()).toEqual({ value: 'a', done: false });
    await expect(q.next()).rejects.toThrow('database away');
  });

  it('a consumer that returns early runs onReturn (unsubscribe) and the producer is unaffected', async () => {
    const q = new EventQueue<number>();
    let returned = 0;
    q.onReturn = () => returned++;
    q.push(1);
    for await (const v of q) {
      expect(v).toBe(1);
      break;
    }
    expect(returned).toBe(1);
    expect(() => q.push(2)).not.toThrow();
    expect(q.pending).toBe(0);
  });
});
