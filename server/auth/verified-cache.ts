/**
 * A bounded cache of tokens whose signature and claims already verified, until their `exp`.
 * A token string is immutable, so a verified one stays valid until it expires; revocation is
 * checked by the caller on every use, never cached. Saves an ECDSA verification per request.
 * @module
 */

export interface VerifiedCache<T> {
  get(token: string, nowMs?: number): T | undefined;
  set(token: string, value: T, expS: number): void;
  readonly size: number;
}

/** Oldest entries are dropped first once `max` is reached (Map keeps insertion order). */
export function createVerifiedCache<T>(max = 10_000): VerifiedCache<T> {
  const entries = new Map<string, { value: T; expMs: number }>();
  return {
    get(token, nowMs = Date.now()) {
      const entry = entries.get(token);
      if (!entry) return undefined;
      if (entry.expMs <= nowMs) {
        entries.delete(token);
        return undefined;
      }
      return entry.value;
    },
    set(token, value, expS) {
      if (entries.size >= max) entries.delete(entries.keys().next().value!);
      entries.set(token, { value, expMs: expS * 1000 });
    },
    get size() {
      return entries.size;
    },
  };
}
