/**
 * A small in-memory fixed-window rate limiter per key (the caller's address), for endpoints whose
 * legitimate traffic is tiny and whose abuse is cheap to try, such as `POST /api/auth/service-token`
 * (the gateway asks about once per token lifetime). Per process: with N replicas the effective
 * limit is N times higher, which is fine for a cap on abuse; nginx limits at the edge as well.
 * The decision is pure (`countHit`); the limiter only keeps the windows.
 * @module
 */

/** One key's current window. */
export interface RateWindow {
  startedAt: number;
  hits: number;
}

export interface RateLimitPolicy {
  limit: number;
  windowMs: number;
}

export interface RateDecision {
  allowed: boolean;
  window: RateWindow;
  /** Seconds until the window resets (0 when allowed). */
  retryAfterS: number;
}

/** Counts one hit against `window` at `now` (a stale or missing window starts over). */
export function countHit(window: RateWindow | undefined, now: number, policy: RateLimitPolicy): RateDecision {
  const current = !window || now - window.startedAt >= policy.windowMs ? { startedAt: now, hits: 0 } : window;
  const next = { startedAt: current.startedAt, hits: current.hits + 1 };
  if (next.hits <= policy.limit) return { allowed: true, window: next, retryAfterS: 0 };
  return { allowed: false, window: next, retryAfterS: Math.max(1, Math.ceil((current.startedAt + policy.windowMs - now) / 1000)) };
}

export interface RateLimiter {
  /** Counts a hit for `key`; returns the seconds to wait when over the limit, else 0. */
  hit(key: string): number;
}

/** A limiter that forgets idle keys, so that memory stays bounded by recent callers. */
export function createRateLimiter(policy: RateLimitPolicy, clock: () => number = Date.now): RateLimiter {
  const windows = new Map<string, RateWindow>();
  let lastSweep = clock();
  return {
    hit(key) {
      const now = clock();
      if (now - lastSweep >= policy.windowMs) {
        for (const [k, w] of windows) if (now - w.startedAt >= policy.windowMs) windows.delete(k);
        lastSweep = now;
      }
      const decision = countHit(windows.get(key), now, policy);
      windows.set(key, decision.window);
      return decision.allowed ? 0 : decision.retryAfterS;
    },
  };
}
