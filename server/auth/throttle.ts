/**
 * Failed-login throttling per (username, address): the first few failures are free, then each
 * further failure locks the pair for twice as long (1 s, 2 s, 4 s … capped at 5 min). A success
 * clears it. The decision is pure; the counter lives in `login_attempts`.
 * @module
 */
import type { AuthDb } from './db.ts';

export const FREE_FAILURES = 5;
export const MAX_LOCK_S = 300;
/** Failures older than this no longer count. */
export const FAILURE_WINDOW_S = 900;

/** Seconds a pair stays locked after its `failures`-th failure (0: not locked). */
export function lockSecondsAfter(failures: number): number {
  if (failures < FREE_FAILURES) return 0;
  return Math.min(MAX_LOCK_S, 2 ** (failures - FREE_FAILURES));
}

/** The throttling key of a login attempt. */
export function throttleKey(input: { username: string; address: string }): string {
  return `${input.username.trim().toLowerCase()}|${input.address}`;
}

/** Seconds until this key may try again (0: now). */
export async function secondsUntilAllowed(db: AuthDb, key: string): Promise<number> {
  const { rows } = await db.query<{ wait: number | null }>(
    `SELECT ceil(extract(epoch FROM locked_until - now()))::int AS wait FROM login_attempts
     WHERE key = $1 AND locked_until > now()`,
    [key],
  );
  return Math.max(0, rows[0]?.wait ?? 0);
}

/** Counts a failure (a stale window starts over) and sets the lock it earns. */
export async function recordLoginFailure(db: AuthDb, key: string): Promise<void> {
  const { rows } = await db.query<{ failures: number }>(
    `INSERT INTO login_attempts AS a (key, failures, first_failure_at) VALUES ($1, 1, now())
     ON CONFLICT (key) DO UPDATE SET
       failures = CASE WHEN a.first_failure_at < now() - make_interval(secs => $2) THEN 1 ELSE a.failures + 1 END,
       first_failure_at = CASE WHEN a.first_failure_at < now() - make_interval(secs => $2) THEN now() ELSE a.first_failure_at END
     RETURNING failures`,
    [key, FAILURE_WINDOW_S],
  );
  const lockS = lockSecondsAfter(rows[0].failures);
  if (lockS > 0) {
    await db.query('UPDATE login_attempts SET locked_until = now() + make_interval(secs => $2) WHERE key = $1', [key, lockS]);
  }
}

export async function clearLoginFailures(db: AuthDb, key: string): Promise<void> {
  await db.query('DELETE FROM login_attempts WHERE key = $1', [key]);
}
