/**
 * Queued input of a conversation (issue 24 item 4), under the edge write's auth (the caller's own
 * conversation, 404 otherwise):
 *   GET    /api/agent/conversations/:id/queue               the messages waiting, in order
 *   DELETE /api/agent/conversations/:id/queue/:request_id   removes one before it starts (404 when
 *                                                           none waits under that id: never queued,
 *                                                           removed, or already started)
 * A removed message's own open call ends with CONFLICT; nothing of it reaches the conversation.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { listQueuedInputs } from '../db/queued-inputs.ts';
import type { Pool } from '../db/index.ts';
import type { Engine } from '../engine/index.ts';
import { AirlockError } from '../errors.ts';
import { ownConversation, type VerifyUser } from '../http/bearer-user.ts';
import { parseInput } from '../http/validate.ts';
import { ConversationParams } from './schemas.ts';

const QueueItemParams = ConversationParams.extend({ request_id: z.string().min(1).max(200, 'request_id must be at most 200 characters') });

export interface QueueRouteOptions {
  pool: Pool;
  engine: Engine;
  verifyUser: VerifyUser;
}

export const queueRoutes: FastifyPluginAsync<QueueRouteOptions> = async (app, options) => {
  app.get('/api/agent/conversations/:id/queue', async (request, reply) => {
    const { id } = parseInput(ConversationParams, request.params, 'params');
    await ownConversation(request, options, id);
    const { rows } = await options.pool.query<{ pending: boolean }>(`SELECT EXISTS (SELECT 1 FROM approvals WHERE conversation_id = $1 AND status = 'pending') AS pending`, [id]);
    const queued = (await listQueuedInputs(options.pool, id)).map((q) => ({
      request_id: q.requestId,
      position: q.position,
      text: typeof q.input.text === 'string' ? q.input.text : '',
      files: Array.isArray(q.input.files) ? q.input.files : [],
      created_at: q.createdAt.toISOString(),
    }));
    reply.header('cache-control', 'no-store');
    // Queued messages never start while an approval waits: they say so.
    return { conversation_id: id, queued, waiting_for_approval: rows[0].pending && queued.length > 0 };
  });

  app.delete('/api/agent/conversations/:id/queue/:request_id', async (request) => {
    const { id, request_id: requestId } = parseInput(QueueItemParams, request.params, 'params');
    const userId = await ownConversation(request, options, id);
    if (!(await options.engine.removeQueued(userId, id, requestId))) throw new AirlockError('NOT_FOUND', 'No message waits in this conversation\u2019s queue under this request_id (it started, was removed, or was never queued).');
    return { conversation_id: id, request_id: requestId, removed: true };
  });
};
