/**
 * Is this error the database being unreachable (down, restarting, overloaded, timing out), as
 * opposed to a bad query or bad data? Such errors become SERVICE_UNAVAILABLE (503, retryable):
 * the request and the caller's session may be perfectly fine, so they must never read as 401.
 * A pure predicate over the error, its `cause` chain and an AggregateError's `errors`.
 * @module
 */

/** Socket-level failures node reports in `error.code`. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'EHOSTDOWN',
  'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN',
]);

/**
 * SQLSTATEs meaning "the server cannot serve you now": connection exceptions (class 08),
 * operator intervention (shutdown, crash, not yet accepting), and resource exhaustion.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53000', '53100', '53200', '53300', '53400']);

/** Messages of pg / pg-pool for a connection that never came or went away (they carry no code). */
const MESSAGES = [
  /^Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Query read timeout/i,
  /Client has encountered a connection error and is not queryable/i,
  /Cannot use a pool after calling end on the pool/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

const MAX_DEPTH = 5;

/** Whether `error` (or what caused it) says the database cannot be reached right now. */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH || typeof error !== 'object' || error === null) return false;
  const { code, message, cause, errors } = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
    // A PostgreSQL Unix socket that is gone; any other missing file is not the database.
    if (code === 'ENOENT' && typeof message === 'string' && message.includes('.s.PGSQL.')) return true;
  }
  if (typeof message === 'string' && MESSAGES.some((m) => m.test(message))) return true;
  if (Array.isArray(errors) && errors.some((e) => isDatabaseUnavailable(e, depth + 1))) return true;
  return cause !== undefined && isDatabaseUnavailable(cause, depth + 1);
}
