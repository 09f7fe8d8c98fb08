/**
 * Failed-login throttling along three keys, so that no single dimension can be rotated away:
 * - the (username, address) pair: a few failures are free, then each further failure delays the
 *   pair for twice as long (1 s, 2 s, 4 s … capped at MAX_LOCK_S = 30 s);
 * - the username alone, with a larger allowance: guesses spread over many addresses;
 * - the address alone, with a larger allowance: one address spraying many usernames. It counts
 *   failures only: successful logins from a shared address (a NAT, an office proxy) never add up.
 * A delayed key answers 429 RATE_LIMITED with `Retry-After` ≤ 30 s and no server-side sleep
 * (issue 30 finding 16): an attacker can slow the real user down by at most that, never lock them
 * out for minutes, while guessing stays capped at one try per 30 s per key.
 * The address is the peer, or the X-Forwarded-For of a TRUST_PROXY peer only, so a client cannot
 * invent addresses: rotating the header gives no extra guesses and naming a victim's address
 * delays only the sender's own. A success clears the pair and the username keys (not the address
 * key: an attacker with one good account could otherwise reset their address). The decisions
 * are pure; the counters live in `login_attempts` (`locked_until` is the delay's end).
 * @module
 */
import type { AuthDb } from './db.ts';

export const FREE_FAILURES = 5;
/** The longest delay any key earns: the most a guesser can hold the real user back (seconds). */
export const MAX_LOCK_S = 30;
/** Failures older than this no longer count. */
export const FAILURE_WINDOW_S = 900;

/** Failures one username may collect from all addresses together before it is slowed. */
export const FREE_FAILURES_PER_USER = 20;
/** Failures one address may collect over all usernames together before it is slowed. */
export const FREE_FAILURES_PER_ADDRESS = 30;

/** Seconds a key is delayed after its `failures`-th failure (0: not delayed), at most MAX_LOCK_S. */
export function lockSecondsAfter(failures: number, freeFailures: number = FREE_FAILURES): number {
  if (failures < freeFailures) return 0;
  return Math.min(MAX_LOCK_S, 2 ** (failures - freeFailures));
}

/** One counter a login attempt feeds, and how many failures it forgives. */
export interface ThrottleRule {
  key: string;
  freeFailures: number;
  /** Whether a successful login clears it. */
  clearedBySuccess: boolean;
}

/** The throttling key of a (username, address) pair. */
export function throttleKey(input: { username: string; address: string }): string {
  return `${input.username.trim().toLowerCase()}|${input.address}`;
}

/** Every counter a login attempt feeds (see the module comment). */
export function throttleRules(input: { username: string; address: string }): ThrottleRule[] {
  return [
    { key: throttleKey(input), freeFailures: FREE_FAILURES, clearedBySuccess: true },
    { key: `user:${input.username.trim().toLowerCase()}`, freeFailures: FREE_FAILURES_PER_USER, clearedBySuccess: true },
    { key: `addr:${input.address}`, freeFailures: FREE_FAILURES_PER_ADDRESS, clearedBySuccess: false },
  ];
}

/** Seconds until every one of these keys may try again (0: now). */
export async function secondsUntilAllowed(db: AuthDb, keys: string | string[]): Promise<number> {
  const { rows } = await db.query<{ wait: number | null }>(
    `SELECT max(ceil(extract(epoch FROM locked_until - now())))::int AS wait FROM login_attempts
     WHERE key = ANY($1::text[]) AND locked_until > now()`,
    [Array.isArray(keys) ? keys : [keys]],
  );
  return Math.max(0, rows[0]?.wait ?? 0);
}

/** Counts a failure on every rule's key. */
export async function recordLoginFailures(db: AuthDb, rules: ThrottleRule[]): Promise<void> {
  for (const rule of rules) await recordLoginFailure(db, rule.key, rule.freeFailures);
}

/** Counts a failure (a stale window starts over) and sets the lock it earns. */
export async function recordLoginFailure(db: AuthDb, key: string, freeFailures: number = FREE_FAILURES): Promise<void> {
  const { rows } = await db.query<{ failures: number }>(
    `INSERT INTO login_attempts AS a (key, failures, first_failure_at) VALUES ($1, 1, now())
     ON CONFLICT (key) DO UPDATE SET
       failures = CASE WHEN a.first_failure_at < now() - make_interval(secs => $2) THEN 1 ELSE a.failures + 1 END,
       first_failure_at = CASE WHEN a.first_failure_at < now() - make_interval(secs => $2) THEN now() ELSE a.first_failure_at END
     RETURNING failures`,
    [key, FAILURE_WINDOW_S],
  );
  const lockS = lockSecondsAfter(rows[0].failures, freeFailures);
  if (lockS > 0) {
    await db.query('UPDATE login_attempts SET locked_until = now() + make_interval(secs => $2) WHERE key = $1', [key, lockS]);
  }
}

export async function clearLoginFailures(db: AuthDb, keys: string | string[]): Promise<void> {
  await db.query('DELETE FROM login_attempts WHERE key = ANY($1::text[])', [Array.isArray(keys) ? keys : [keys]]);
}
