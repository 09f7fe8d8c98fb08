/**
 * GET /api/audit: the tool-call audit log, newest first, filtered and paged (admin only); and
 * GET /api/audit/export, the chained audit as JSONL (export.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { listAudit, type AuditRecord } from '../../db/audit.ts';
import type { ApiContext } from '../context.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { assertPermission, requestUser, requireUser } from '../identity.ts';
import { parseInput } from '../../http/validate.ts';
import { auditExport } from './export.ts';
import { AuditCursor, AuditExportQuery, AuditQuery } from './schemas.ts';

const auditJson = (a: AuditRecord) => ({
  id: a.id,
  at: a.at,
  service_actor: a.serviceActor,
  user_id: a.userId,
  username: a.username,
  user_role: a.userRole,
  operation: a.operation,
  method: a.method,
  path: a.path,
  arguments: a.arguments,
  outcome: a.outcome,
  status_code: a.statusCode,
  error_code: a.errorCode,
  tool_call_id: a.toolCallId,
  conversation_id: a.conversationId,
  duration_ms: a.durationMs,
  policy_action: a.policyAction ?? null,
  policy_scope: a.policyScope ?? null,
  policy_matched: a.policyMatched ?? null,
});

export const auditRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.addHook('onRequest', requireUser(ctx));
  app.addHook('preHandler', async (request) => assertPermission(requestUser(request), 'audit:read'));

  app.get('/', async (request) => {
    const query = parseInput(AuditQuery, request.query, 'query');
    const cursor = query.cursor ? decodeCursor(query.cursor, AuditCursor) : null;
    const page = await listAudit(ctx.pool, {
      operation: query.operation,
      userId: query.user_id,
      outcome: query.outcome,
      toolCallId: query.tool_call_id,
      conversationId: query.conversation_id,
      since: query.since ? new Date(query.since) : undefined,
      until: query.until ? new Date(query.until) : undefined,
      beforeId: cursor?.b,
      limit: query.limit,
    });
    return { items: page.items.map(auditJson), next_cursor: page.nextBeforeId ? encodeCursor({ b: page.nextBeforeId }) : null };
  });

  app.get('/export', async (request, reply) => {
    const range = parseInput(AuditExportQuery, request.query, 'query');
    const jwks = await ctx.keys.jwks();
    reply.type('application/x-ndjson; charset=utf-8');
    return reply.send(auditExport(ctx.pool, jwks, range));
  });
};
