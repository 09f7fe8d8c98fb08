/**
 * Logs for people when stdout is a terminal, JSON lines for machines otherwise. pino (Fastify's
 * logger) writes JSON to a stream; in a terminal that stream is this small formatter:
 *
 *   07:02:13 INFO  request completed  GET /api/auth/me 200 3ms
 *   07:02:14 ERROR shutdown failed  Error: connection refused
 * @module
 */
import type { FastifyServerOptions } from 'fastify';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const SKIP = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'req', 'res', 'err', 'responseTime', 'reqId', 'v']);

function scalar(value: unknown): string {
  if (typeof value === 'string') return /\s/.test(value) ? JSON.stringify(value) : value;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** One human line for one pino JSON record; the input returned as-is when it is not JSON. */
export function formatLogLine(line: string): string {
  let record: Record<string, any>;
  try {
    record = JSON.parse(line);
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const time = new Date(record.time ?? Date.now()).toISOString().slice(11, 19);
  const level = (LEVELS[record.level] ?? String(record.level)).padEnd(5);
  const parts: string[] = [record.msg ?? ''];
  if (record.req) parts.push(`${record.req.method} ${record.req.url}`);
  if (record.res) parts.push(String(record.res.statusCode));
  if (typeof record.responseTime === 'number') parts.push(`${Math.round(record.responseTime)}ms`);
  if (record.err) parts.push(`${record.err.type ?? 'Error'}: ${record.err.message}`);
  const extra = Object.entries(record).filter(([k, v]) => !SKIP.has(k) && v !== undefined);
  if (extra.length) parts.push(extra.map(([k, v]) => `${k}=${scalar(v)}`).join(' '));
  return `${time} ${level} ${parts.filter(Boolean).join('  ')}\n`;
}

/** Fastify's `logger` option: pretty in a terminal, JSON otherwise. */
export function loggerOptions(
  level: string,
  options: { serializers?: Record<string, (value: any) => unknown> } = {},
  pretty = Boolean(process.stdout.isTTY),
): FastifyServerOptions['logger'] {
  if (!pretty) return { level, ...options };
  return { level, ...options, stream: { write: (line: string) => void process.stdout.write(formatLogLine(line)) } };
}
