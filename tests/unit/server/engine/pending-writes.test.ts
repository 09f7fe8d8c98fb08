import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PendingWrites } from '../../../../server/engine/pending-writes.ts';

const down = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const log = () => ({ warn: vi.fn(), error: vi.fn(), info: vi.fn() });

describe('PendingWrites', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('retries a write while the database is away (1 s, then doubling) and runs it once it is back', async () => {
    let up = false;
    const write = vi.fn(async () => {
      if (!up) throw down();
    });
    const pending = new PendingWrites({ log: log() });
    pending.defer('answer', write);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(write).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(write).toHaveBeenCalledTimes(2);
    up = true;
    await vi.advanceTimersByTimeAsync(4_000);
    expect(write).toHaveBeenCalledTimes(3);
    expect(pending.size).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(write).toHaveBeenCalledTimes(3); // written once, never again
  });

  it('keeps order, and drops (with a log) a write that fails for another reason', async () => {
    const order: string[] = [];
    const logger = log();
    const pending = new PendingWrites({ log: logger });
    pending.defer('a', async () => void order.push('a'));
    pending.defer('bad', async () => {
      throw Object.assign(new Error('invalid byte sequence'), { code: '22021' });
    });
    pending.defer('c', async () => void order.push('c'));
    await pending.flush();
    expect(order).toEqual(['a', 'c']);
    expect(pending.size).toBe(0);
    expect(logger.error).toHaveBeenCalledWith(expect.objectContaining({ write: 'bad' }), expect.any(String));
  });

  it('is bounded: beyond max the oldest is dropped and logged', () => {
    const logger = log();
    const pending = new PendingWrites({ log: logger, max: 2 });
    for (const label of ['1', '2', '3']) pending.defer(label, async () => {});
    expect(pending.size).toBe(2);
    expect(logger.error).toHaveBeenCalledWith({ write: '1' }, expect.any(String));
  });

  it('close() tries once more and reports what could not be written', async () => {
    const logger = log();
    const pending = new PendingWrites({ log: logger });
    pending.defer('lost', async () => {
      throw down();
    });
    await pending.close();
    expect(pending.size).toBe(0);
    expect(logger.error).toHaveBeenCalledWith({ writes: ['lost'] }, expect.any(String));
  });
});
