/**
 * The tool scope's hooks: tokens verified in onRequest (before the body is even parsed), RBAC in
 * preHandler, and one audit row per call in onSend, so the row exists by the time the caller sees
 * the response (onResponse would race a caller that reads the audit log right after).
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditOutcome } from '../../db/audit.ts';
import { createAuditWriter } from './audit-writer.ts';
import type { ApiContext } from '../context.ts';
import { assertPermission, maybeRequestService, maybeRequestUser, requestUser, requireServiceAndUser } from '../identity.ts';
import type { ToolSpec } from '../../operations/index.ts';

const started = new WeakMap<FastifyRequest, number>();
const replayed = new WeakSet<FastifyRequest>();
const previewed = new WeakSet<FastifyRequest>();

/** The route's tool, from its `config.tool`. */
export function routeTool(request: FastifyRequest): ToolSpec | undefined {
  return (request.routeOptions.config as { tool?: ToolSpec } | undefined)?.tool;
}

/** Marks a response as a stored idempotent result (audited as `replayed`). */
export function markReplayed(request: FastifyRequest): void {
  replayed.add(request);
}

/** Marks a response as a dry run's (audited as `preview`). */
export function markPreview(request: FastifyRequest): void {
  previewed.add(request);
}

export function outcomeFor(status: number, isReplay: boolean, isPreview = false): AuditOutcome {
  if (status < 400) return isPreview ? 'preview' : isReplay ? 'replayed' : 'success';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'denied';
  if (status === 400 || status === 413) return 'invalid';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  return 'error';
}

function header(request: FastifyRequest, name: string): string | null {
  const value = request.headers[name];
  return typeof value === 'string' && value.length > 0 ? value.slice(0, 200) : null;
}

/**
 * The gateway's policy decision for the call (x-policy-* headers). Believed only behind the
 * service token, which every tool route requires before this runs: a user cannot forge one.
 */
function policyHeaders(request: FastifyRequest): { policyAction: string | null; policyScope: string | null; policyMatched: boolean | null } {
  if (!maybeRequestService(request)) return { policyAction: null, policyScope: null, policyMatched: null };
  const action = header(request, 'x-policy-action');
  const matched = header(request, 'x-policy-matched');
  return {
    policyAction: action && /^(allow|caution|require_approval|deny)$/.test(action) ? action : null,
    policyScope: header(request, 'x-policy-scope'),
    policyMatched: matched === 'true' ? true : matched === 'false' ? false : null,
  };
}

function errorCodeOf(payload: unknown): string | null {
  if (typeof payload !== 'string') return null;
  try {
    const code = (JSON.parse(payload) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : null;
  } catch {
    return null;
  }
}

export function registerToolHooks(app: FastifyInstance, ctx: ApiContext): void {
  const authenticate = requireServiceAndUser(ctx);
  const audit = createAuditWriter(ctx.pool);

  app.addHook('onRequest', async (request, reply) => {
    started.set(request, performance.now());
    if (routeTool(request)) await authenticate(request, reply);
  });

  app.addHook('preHandler', async (request) => {
    const tool = routeTool(request);
    if (tool?.permission) assertPermission(requestUser(request), tool.permission);
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload) => {
    const tool = routeTool(request);
    if (!tool) return payload;
    const user = maybeRequestUser(request);
    const body = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
    const args = { ...(request.query as Record<string, unknown>), ...(request.params as Record<string, unknown>), ...body };
    const status = reply.statusCode;
    try {
      await audit.write({
        serviceActor: maybeRequestService(request)?.clientId ?? null,
        userId: user?.userId ?? null,
        username: user?.username ?? null,
        userRole: user?.role ?? null,
        operation: tool.name,
        method: request.method,
        path: request.url.split('?')[0],
        arguments: args,
        outcome: outcomeFor(status, replayed.has(request), previewed.has(request)),
        statusCode: status,
        errorCode: status >= 400 ? errorCodeOf(payload) : null,
        toolCallId: header(request, 'x-tool-call-id') ?? header(request, 'idempotency-key'),
        conversationId: header(request, 'x-conversation-id'),
        durationMs: Math.round(performance.now() - (started.get(request) ?? performance.now())),
        ...policyHeaders(request),
      });
    } catch (error) {
      request.log.error({ err: error, tool: tool.name }, 'audit write failed');
    }
    return payload;
  });
}
