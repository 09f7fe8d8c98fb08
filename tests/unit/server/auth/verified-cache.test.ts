import { describe, expect, it } from 'vitest';
import { createVerifiedCache } from '../../../../server/auth/verified-cache.ts';

describe('verified-token cache', () => {
  it('returns a value until its exp, then forgets it', () => {
    const cache = createVerifiedCache<string>();
    cache.set('t', 'user', 1_000);
    expect(cache.get('t', 999_999)).toBe('user');
    expect(cache.get('t', 1_000_000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('is bounded: the oldest entry goes first', () => {
    const cache = createVerifiedCache<number>(2);
    cache.set('a', 1, 9e9);
    cache.set('b', 2, 9e9);
    cache.set('c', 3, 9e9);
    expect(cache.size).toBe(2);
    expect(cache.get('a', 0)).toBeUndefined();
    expect(cache.get('c', 0)).toBe(3);
  });
});
