/**
 * Start failures as one line that says what happened and what to do. Pure: `main.ts` prints the
 * result; a table test covers each case. The stack trace is for LOG_LEVEL=debug only.
 * @module
 */

export interface StartContext {
  host: string;
  port: number;
  /** Set when the database is external (DATABASE_URL), to name it without its password. */
  databaseUrl?: string;
}

const PG_UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOENT']);
const PG_AUTH = new Set(['28P01', '28000']);
const KNOWN_NAMES = new Set(['ConfigError', 'DataDirInUseError', 'KeyCipherError', 'PolicyFileError', 'WebhookSettingsError']);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function messageOf(error: unknown): string {
  if (error instanceof Error && error.message) return error.message;
  if (typeof error === 'string' && error) return error;
  if (error instanceof AggregateError) return error.errors.map(messageOf).join('; ');
  return `an error without a message (${error === undefined ? 'undefined' : JSON.stringify(error)})`;
}

/** `postgres://user@host:port/db` of a URL: never its password. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    const socket = u.searchParams.get('host');
    return `${u.protocol}//${u.username ? `${decodeURIComponent(u.username)}@` : ''}${socket ?? u.host}${u.pathname}`;
  } catch {
    return 'DATABASE_URL (not a valid URL)';
  }
}

/** One line (no trailing newline) for a failure before "ready". */
export function describeStartFailure(error: unknown, ctx: StartContext): string {
  const code = codeOf(error);
  const syscall = (error as { syscall?: string } | null)?.syscall;
  if (code === 'EADDRINUSE' && syscall === 'listen') {
    return `Airlock cannot start: port ${ctx.port} on ${ctx.host} is already in use by another program. Stop that program, or set PORT to a free port.`;
  }
  if (code === 'EACCES' && syscall === 'listen') {
    return `Airlock cannot start: listening on port ${ctx.port} needs privileges this user lacks. Use a port above 1023 (PORT=3000) or put a proxy in front.`;
  }
  if (code === 'EADDRNOTAVAIL') {
    return `Airlock cannot start: HOST=${ctx.host} is not an address of this machine. Use 127.0.0.1, 0.0.0.0 or one of its addresses.`;
  }
  if (error instanceof Error && KNOWN_NAMES.has(error.name)) return `Airlock cannot start: ${error.message}`;
  if (ctx.databaseUrl && code && (PG_UNREACHABLE.has(code) || PG_AUTH.has(code) || code === '3D000')) {
    const where = redactDatabaseUrl(ctx.databaseUrl);
    const what = PG_AUTH.has(code) ? 'refused the credentials' : code === '3D000' ? 'has no such database' : 'cannot be reached';
    return `Airlock cannot start: the database ${where} ${what} (${messageOf(error)}). Check DATABASE_URL and that PostgreSQL is running, or unset DATABASE_URL to use the embedded database.`;
  }
  return `Airlock cannot start: ${messageOf(error)}`;
}
