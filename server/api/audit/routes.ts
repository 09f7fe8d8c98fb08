/**
 * GET /api/audit: the tool-call audit log, newest first, filtered and paged (admin only);
 * GET /api/audit/export, the chained audit as JSONL (export.ts); and GET /api/audit/checkpoint-key,
 * the public JWK of the key that signs the chain's heads (checkpoints.ts; public).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { listAudit, type AuditRecord } from '../../db/audit.ts';
import type { ApiContext } from '../context.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { assertPermission, requestUser, requireUser } from '../identity.ts';
import { parseInput } from '../../http/validate.ts';
import type { AuditCheckpoints } from './checkpoints.ts';
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

export const auditRoutes: FastifyPluginAsync<{ ctx: ApiContext; checkpoints: AuditCheckpoints }> = async (app, { ctx, checkpoints }) => {
  // The checkpoint key's public half, for anyone who checks the audit (no sign-in: it is public).
  app.get('/checkpoint-key', async () => checkpoints.signer.publicJwk);

  await app.register(async (authed) => auditReadRoutes(authed, ctx, checkpoints));
};

async function auditReadRoutes(app: FastifyInstance, ctx: ApiContext, checkpoints: AuditCheckpoints): Promise<void> {
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
    // Every export signs the heads first, so it carries a signed head as new as its rows.
    await checkpoints.signNow();
    reply.type('application/x-ndjson; charset=utf-8');
    return reply.send(auditExport(ctx.pool, jwks, range));
  });
}
