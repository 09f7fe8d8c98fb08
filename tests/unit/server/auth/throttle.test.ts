import { describe, expect, it } from 'vitest';
import {
  FREE_FAILURES,
  FREE_FAILURES_PER_ADDRESS,
  FREE_FAILURES_PER_USER,
  lockSecondsAfter,
  MAX_LOCK_S,
  throttleKey,
  throttleRules,
} from '../../../../server/auth/throttle.ts';

describe('login throttling', () => {
  it('lets the first failures through, then doubles the lock, capped', () => {
    const locks = Array.from({ length: 16 }, (_, i) => lockSecondsAfter(i + 1));
    expect(locks.slice(0, FREE_FAILURES - 1)).toEqual([0, 0, 0, 0]);
    expect(locks.slice(FREE_FAILURES - 1, FREE_FAILURES + 4)).toEqual([1, 2, 4, 8, 16]);
    expect(lockSecondsAfter(100)).toBe(MAX_LOCK_S);
  });

  it('never delays anyone for more than 30 s (issue 30 finding 16: no lock-out for minutes)', () => {
    expect(MAX_LOCK_S).toBeLessThanOrEqual(30);
    for (const free of [FREE_FAILURES, FREE_FAILURES_PER_USER, FREE_FAILURES_PER_ADDRESS]) {
      for (let failures = 1; failures <= 200; failures++) expect(lockSecondsAfter(failures, free)).toBeLessThanOrEqual(30);
    }
  });

  it('keys by normalised username and address', () => {
    expect(throttleKey({ username: ' Admin ', address: '10.0.0.1' })).toBe('admin|10.0.0.1');
    expect(throttleKey({ username: 'admin', address: '10.0.0.2' })).not.toBe(throttleKey({ username: 'admin', address: '10.0.0.1' }));
  });
});

describe('throttleRules', () => {
  it('feeds the pair, the username and the address, each with its own allowance', () => {
    expect(throttleRules({ username: ' Admin ', address: '10.0.0.1' })).toEqual([
      { key: 'admin|10.0.0.1', freeFailures: FREE_FAILURES, clearedBySuccess: true },
      { key: 'user:admin', freeFailures: FREE_FAILURES_PER_USER, clearedBySuccess: true },
      { key: 'addr:10.0.0.1', freeFailures: FREE_FAILURES_PER_ADDRESS, clearedBySuccess: false },
    ]);
  });

  it.each([
    [FREE_FAILURES_PER_USER - 1, FREE_FAILURES_PER_USER, 0],
    [FREE_FAILURES_PER_USER, FREE_FAILURES_PER_USER, 1],
    [FREE_FAILURES_PER_ADDRESS + 2, FREE_FAILURES_PER_ADDRESS, 4],
  ])('failure %i with %i free locks for %i s', (failures, free, seconds) => {
    expect(lockSecondsAfter(failures, free)).toBe(seconds);
  });
});
