/**
 * One HTTP call from a tool to the backend API, with both identities and the audit headers, and
 * the status mapping to our error codes.
 * @module
 */
import { AirlockError, isErrorCode, type ErrorCode } from '../../errors.ts';
import type { PolicyStamp } from '../../policy/index.ts';
import type { Span } from '../../telemetry/index.ts';
import { backendCallSpan } from '../../telemetry/spans.ts';
import type { ToolContext } from './context.ts';

export interface BackendRequest {
  method: 'GET' | 'POST';
  path: string;
  /** The path's route, `:param` segments unfilled (the span's name); default: the path. */
  route?: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
}

/** HTTP status -> error code: 401 UNAUTHORIZED, 403 FORBIDDEN, 5xx TOOL_FAILURE; 4xx keep the body's code. */
export function codeForStatus(status: number, bodyCode?: unknown): ErrorCode {
  if (status === 401) return 'UNAUTHORIZED';
  if (status === 403) return 'FORBIDDEN';
  if (status >= 500) return 'TOOL_FAILURE';
  if (isErrorCode(bodyCode)) return bodyCode;
  if (status === 404) return 'NOT_FOUND';
  if (status === 409) return 'CONFLICT';
  if (status === 400 || status === 422) return 'VALIDATION_ERROR';
  return 'TOOL_FAILURE';
}

function urlOf(ctx: ToolContext, req: BackendRequest): string {
  const url = new URL(`${ctx.apiUrl}${req.path}`);
  for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
  return url.toString();
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}

/**
 * Calls the backend; resolves with the JSON body or throws AirlockError. Retries once with a fresh
 * service token after a 401 (it may have expired in flight); POSTs are safe to repeat because they
 * carry the tool call id as Idempotency-Key. An abort of the run itself is rethrown untouched.
 * A preview (dry run) passes no `toolCallId`: it sends neither X-Tool-Call-Id nor Idempotency-Key,
 * so it can never take the key of the call it previews. `ifMatch`: the previewed state's hash.
 * `span`: the tool call's span; the call is its client span's child, and sends that client span
 * as W3C `traceparent` (server/telemetry; nothing is sent when traces are off).
 */
export async function callBackend(
  ctx: ToolContext,
  req: BackendRequest,
  meta: { toolCallId?: string; signal?: AbortSignal; policy?: PolicyStamp; ifMatch?: string; span?: Span },
): Promise<unknown> {
  const url = urlOf(ctx, req);
  const span = backendCallSpan({ method: req.method, route: req.route ?? req.path, url, parent: meta.span });
  try {
    const { status, body } = await send(ctx, req, url, meta, span.traceparent());
    span.set({ 'http.response.status_code': status });
    return body;
  } catch (error) {
    span.fail(error instanceof AirlockError ? error.code : error instanceof Error ? error.name : 'Error', (error as Error)?.message);
    throw error;
  } finally {
    span.end();
  }
}

async function send(ctx: ToolContext, req: BackendRequest, url: string, meta: Parameters<typeof callBackend>[2], traceparent: string | null): Promise<{ status: number; body: unknown }> {
  for (let attempt = 0; ; attempt++) {
    const headers: Record<string, string> = {
      authorization: `Bearer ${await ctx.serviceToken.get()}`,
      'x-user-jwt': ctx.userToken,
      ...(meta.toolCallId ? { 'x-tool-call-id': meta.toolCallId } : {}),
      ...(meta.ifMatch ? { 'if-match': meta.ifMatch } : {}),
      'x-conversation-id': ctx.conversationId,
      accept: 'application/json',
      ...(traceparent ? { traceparent } : {}),
      // The policy decision that let the call through, for the api's audit row (service-token only).
      ...(meta.policy ? { 'x-policy-action': meta.policy.action, 'x-policy-scope': meta.policy.scope, 'x-policy-matched': String(meta.policy.matched) } : {}),
    };
    if (req.method === 'POST') {
      headers['content-type'] = 'application/json';
      if (meta.toolCallId) headers['idempotency-key'] = meta.toolCallId;
    }
    const timeout = AbortSignal.timeout(ctx.timeoutMs);
    const signal = meta.signal ? AbortSignal.any([meta.signal, timeout]) : timeout;
    let response: Response;
    try {
      response = await ctx.fetch(url, {
        method: req.method,
        headers,
        body: req.method === 'POST' ? JSON.stringify(req.body ?? {}) : undefined,
        signal,
      });
    } catch (cause) {
      if (meta.signal?.aborted) throw meta.signal.reason ?? cause;
      const what = timeout.aborted ? `timed out after ${ctx.timeoutMs} ms` : 'is unreachable';
      throw new AirlockError('TOOL_FAILURE', `The backend API ${what}.`, { cause });
    }
    const body = await readJson(response);
    if (response.ok) return { status: response.status, body };
    if (response.status === 401 && attempt === 0) {
      ctx.serviceToken.invalidate();
      continue;
    }
    const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } }).error;
    const code = codeForStatus(response.status, error?.code);
    const message = typeof error?.message === 'string' ? error.message : `The backend API answered HTTP ${response.status}.`;
    throw new AirlockError(code, message, { details: error?.details });
  }
}
