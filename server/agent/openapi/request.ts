/**
 * One OpenAPI call on the wire (issue 41), built so the model cannot steer it anywhere else:
 * - the scheme, host and port are the configured base URL's; the path is the document's template
 *   with each path parameter percent-encoded as one segment (`../admin` stays `..%2Fadmin`; a
 *   value of `.` or `..` alone is refused, since URL parsing would resolve it);
 * - only the operation's declared parameters are sent; the headers only the gateway sets
 *   (operations.ts RESERVED_HEADERS) are never taken from arguments, and a header value with a
 *   line break is refused;
 * - a redirect is followed only to the same origin (at most 3), never to another;
 * - the answer is read up to a cap, so a huge body cannot fill the gateway's memory.
 * @module
 */
import { AirlockError } from '../../errors.ts';
import type { OpenApiOperation } from './operations.ts';
import { RESERVED_HEADERS } from './operations.ts';

type Args = Record<string, unknown>;

export interface BuiltRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

const MAX_REDIRECTS = 3;

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The request of `op` with `args` against `base`; throws VALIDATION_ERROR for arguments it refuses. Pure. */
export function buildRequest(op: OpenApiOperation, base: URL, args: Args): BuiltRequest {
  const byName = new Map(op.params.map((p) => [p.name, p.in]));
  const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const value = args[name];
    if (byName.get(name) !== 'path' || value === undefined || value === null || value === '') throw new AirlockError('VALIDATION_ERROR', `The path parameter "${name}" is required.`);
    const raw = text(value);
    if (raw === '.' || raw === '..') throw new AirlockError('VALIDATION_ERROR', `The path parameter "${name}" cannot be "${raw}".`);
    return encodeURIComponent(raw);
  });
  const url = new URL(base.origin);
  url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
  const headers: Record<string, string> = {};
  for (const p of op.params) {
    const value = args[p.name];
    if (value === undefined || value === null) continue;
    if (p.in === 'query') for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(p.name, text(v));
    if (p.in === 'header' && !RESERVED_HEADERS.has(p.name.toLowerCase())) {
      const v = text(value);
      if (/[\r\n\0]/.test(v)) throw new AirlockError('VALIDATION_ERROR', `The header parameter "${p.name}" cannot hold a line break.`);
      headers[p.name.toLowerCase()] = v;
    }
  }
  // The template is the document's, not the model's; still, nothing leaves the configured origin.
  if (url.origin !== base.origin) throw new AirlockError('VALIDATION_ERROR', 'The request would leave the configured origin.');
  const built: BuiltRequest = { url, method: op.method, headers };
  if (op.body && args.body !== undefined) {
    built.headers['content-type'] = 'application/json';
    built.body = JSON.stringify(args.body);
  }
  return built;
}

/** Reads at most `maxChars` characters of the body (then cancels it): the rest is never buffered. */
async function readCapped(response: Response, maxChars: number): Promise<{ text: string; cut: boolean }> {
  if (!response.body) return { text: '', cut: false };
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let out = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text: out, cut: false };
    out += value;
    if (out.length > maxChars) {
      await reader.cancel().catch(() => {});
      return { text: out.slice(0, maxChars), cut: true };
    }
  }
}

export interface Answer {
  status: number;
  text: string;
  /** The body was longer than the cap. */
  cut: boolean;
}

/**
 * Sends `req` with `extra` headers (identity, idempotency: they win over anything else), following
 * same-origin redirects only. Throws TOOL_FAILURE for a connection failure, a timeout or a
 * cross-origin redirect; an abort of the run is rethrown as is.
 */
export async function sendRequest(req: BuiltRequest, extra: Record<string, string>, options: { timeoutMs: number; maxChars: number; signal?: AbortSignal; server: string }): Promise<Answer> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let { url, method, body } = req;
  for (let hop = 0; ; hop++) {
    let response: Response;
    try {
      response = await fetch(url, { method, headers: { accept: 'application/json', ...req.headers, ...extra }, body, redirect: 'manual', signal });
    } catch (cause) {
      if (options.signal?.aborted) throw options.signal.reason ?? cause;
      const what = timeout.aborted ? `timed out after ${options.timeoutMs} ms` : `is unreachable (${(cause as Error).cause instanceof Error ? ((cause as Error).cause as Error).message : (cause as Error).message})`;
      throw new AirlockError('TOOL_FAILURE', `The API "${options.server}" ${what}.`, { cause });
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel().catch(() => {});
      const next = new URL(location, url);
      if (next.origin !== req.url.origin) throw new AirlockError('TOOL_FAILURE', `The API "${options.server}" redirected to another origin (${next.origin}); not followed.`);
      if (hop >= MAX_REDIRECTS) throw new AirlockError('TOOL_FAILURE', `The API "${options.server}" redirected more than ${MAX_REDIRECTS} times.`);
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) [method, body] = ['GET', undefined];
      url = next;
      continue;
    }
    const read = await readCapped(response, options.maxChars);
    return { status: response.status, ...read };
  }
}
