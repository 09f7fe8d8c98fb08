import { describe, expect, it } from 'vitest';
import { FREE_FAILURES, lockSecondsAfter, MAX_LOCK_S, throttleKey } from '../../../../server/auth/throttle.ts';

describe('login throttling', () => {
  it('lets the first failures through, then doubles the lock, capped', () => {
    const locks = Array.from({ length: 16 }, (_, i) => lockSecondsAfter(i + 1));
    expect(locks.slice(0, FREE_FAILURES - 1)).toEqual([0, 0, 0, 0]);
    expect(locks.slice(FREE_FAILURES - 1, FREE_FAILURES + 4)).toEqual([1, 2, 4, 8, 16]);
    expect(lockSecondsAfter(100)).toBe(MAX_LOCK_S);
  });

  it('keys by normalised username and address', () => {
    expect(throttleKey({ username: ' Admin ', address: '10.0.0.1' })).toBe('admin|10.0.0.1');
    expect(throttleKey({ username: 'admin', address: '10.0.0.2' })).not.toBe(throttleKey({ username: 'admin', address: '10.0.0.1' }));
  });
});
