/**
 * Prunes rows that only matter for a while: revoked tokens and browser sessions past their expiry,
 * stale failed-login counters, idempotency results older than any retry. Runs at start and hourly; the timer does not
 * keep the process alive and stops when the app closes.
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { Queryable } from '../db/index.ts';

/** Days an idempotency result is kept (a retried tool call comes within minutes). */
export const IDEMPOTENCY_RETENTION_DAYS = 7;

export async function pruneExpired(q: Queryable): Promise<void> {
  await q.query('DELETE FROM revoked_tokens WHERE expires_at < now()');
  // An expired refresh token is refused by its expiry anyway; its row serves no replay check.
  await q.query('DELETE FROM refresh_tokens WHERE expires_at < now()');
  await q.query(
    "DELETE FROM login_attempts WHERE first_failure_at < now() - interval '1 day' AND (locked_until IS NULL OR locked_until < now())",
  );
  await q.query('DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(days => $1)', [IDEMPOTENCY_RETENTION_DAYS]);
}

export function scheduleHousekeeping(app: FastifyInstance, q: Queryable, everyMs = 3_600_000): void {
  const run = () => pruneExpired(q).catch((error) => app.log.warn({ err: error }, 'housekeeping failed'));
  const timer = setInterval(run, everyMs);
  timer.unref();
  app.addHook('onReady', async () => void run());
  app.addHook('onClose', async () => clearInterval(timer));
}
