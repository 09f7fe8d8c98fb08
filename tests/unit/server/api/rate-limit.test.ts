import { describe, expect, it } from 'vitest';
import { countHit, createRateLimiter } from '../../../../server/api/rate-limit.ts';

const policy = { limit: 3, windowMs: 60_000 };

describe('countHit', () => {
  it.each([
    ['first hit opens a window', undefined, 1_000, true, { startedAt: 1_000, hits: 1 }, 0],
    ['under the limit', { startedAt: 0, hits: 2 }, 1_000, true, { startedAt: 0, hits: 3 }, 0],
    ['over the limit waits for the window end', { startedAt: 0, hits: 3 }, 1_000, false, { startedAt: 0, hits: 4 }, 59],
    ['a stale window starts over', { startedAt: 0, hits: 99 }, 60_000, true, { startedAt: 60_000, hits: 1 }, 0],
    ['never asks to wait less than 1 s', { startedAt: 0, hits: 3 }, 59_999, false, { startedAt: 0, hits: 4 }, 1],
  ])('%s', (_name, window, now, allowed, next, retryAfterS) => {
    expect(countHit(window, now, policy)).toEqual({ allowed, window: next, retryAfterS });
  });
});

describe('createRateLimiter', () => {
  it('limits each key on its own and forgets idle keys', () => {
    let now = 0;
    const limiter = createRateLimiter(policy, () => now);
    expect([1, 2, 3, 4].map(() => limiter.hit('a'))).toEqual([0, 0, 0, 60]);
    expect(limiter.hit('b')).toBe(0);
    now = 60_000;
    expect(limiter.hit('a')).toBe(0);
  });
});
