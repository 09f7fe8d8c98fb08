/**
 * /api/agent/conversations/:id/active: the multi-tab gate. Whether a run holds the conversation's
 * lease, in which state and since when.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { getConversationForUser } from '../../db/conversations.ts';
import { getLease } from '../../db/leases.ts';
import { AirlockError } from '../../errors.ts';
import type { ApiContext } from '../context.ts';
import { requestUser, requireUser } from '../identity.ts';
import { parseInput } from '../../http/validate.ts';
import { ConversationParams } from '../conversations/schemas.ts';

export const agentRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.addHook('onRequest', requireUser(ctx));

  app.get('/conversations/:id/active', async (request, reply) => {
    const { id } = parseInput(ConversationParams, request.params, 'params');
    const conversation = await getConversationForUser(ctx.pool, { id, userId: requestUser(request).userId });
    if (!conversation) throw new AirlockError('NOT_FOUND', 'No such conversation.');
    const lease = await getLease(ctx.pool, id);
    reply.header('cache-control', 'no-store');
    if (!lease?.held) return { active: false, state: 'idle', since: null };
    return { active: true, state: lease.state, since: lease.since, holder: lease.holder };
  });
};
