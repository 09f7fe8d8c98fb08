/**
 * Seed 001's edge writes (issue 24 item 4): `POST /api/agent/conversations/{id}/events` with
 * `{kind: "user.message", payload: {text, requestId?, delivery?, selection?, retryOf?, …}}` is
 * user input from an external channel. The only kind an edge may write is `user.message` (any
 * other is 400); the conversation must be the caller's (404 otherwise, as every route here). It
 * goes through the engine as a submit of that conversation, so auth, idempotency (`requestId`,
 * unique per conversation: the same one again answers the same submission, created: false; with
 * another text, 409 CONFLICT) and the busy rule are those of /chat: sent while the agent runs, it is
 * queued (202, `queued: true, position`; issue 24), and its user.message is written when its turn
 * starts. The message is written for the
 * next turn (`delivery: "queue"`; `guide` is written as queue, so the event says what happened)
 * and answered by the run it starts; the answer is read from the ledger (GET …/events[/stream]).
 * Unknown payload fields are allowed, as the seed allows them, and not stored.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { Pool } from '../db/index.ts';
import type { Engine } from '../engine/index.ts';
import { AirlockError } from '../errors.ts';
import { bearerUser, ownConversation, type VerifyUser } from '../http/bearer-user.ts';
import { parseInput } from '../http/validate.ts';
import { ConversationParams } from './schemas.ts';

const RequestId = z.string().trim().min(1).max(200, 'must be at most 200 characters');

const EdgeWrite = z.object({
  kind: z.string().refine((k) => k === 'user.message', 'an edge may write only "user.message"'),
  payload: z.looseObject({
    text: z.string('text must be a string').trim().min(1, 'text must not be empty').max(100_000),
    requestId: RequestId.optional(),
    request_id: RequestId.optional(),
    delivery: z.enum(['queue', 'guide'], 'delivery must be "queue" or "guide"').optional(),
    selection: z.record(z.string(), z.unknown(), 'selection must be a JSON object').optional(),
    retryOf: z.number().int().min(0, 'retryOf must be a non-negative integer').optional(),
  }),
});

export interface EdgeWriteOptions {
  pool: Pool;
  engine: Engine;
  verifyUser: VerifyUser;
}

export const edgeWriteRoutes: FastifyPluginAsync<EdgeWriteOptions> = async (app, options) => {
  app.post('/api/agent/conversations/:id/events', async (request, reply) => {
    const { id } = parseInput(ConversationParams, request.params, 'params');
    const { payload } = parseInput(EdgeWrite, request.body, 'body');
    if (payload.requestId && payload.request_id && payload.requestId !== payload.request_id) {
      throw new AirlockError('VALIDATION_ERROR', 'requestId and request_id name two different keys; send one.');
    }
    await ownConversation(request, options, id);
    const user = await bearerUser(request, options.verifyUser);
    const requestId = payload.requestId ?? payload.request_id ?? null;
    const run = await options.engine.submit(
      { text: payload.text, files: [], conversationId: id, action: null, requestId, approvalId: null, delivery: 'queue' },
      user,
      { queue: true },
    );
    // Sent while the agent runs: the message waits for its turn (queue-routes.ts removes it).
    if (run.queued) {
      reply.code(202);
      return { created: !run.replayed, requestId: run.queued.requestId, kind: 'user.message', conversation_id: id, run_id: run.runId, delivery: 'queue', queued: true, position: run.queued.position };
    }
    const message = await userMessageOf(run);
    reply.code(run.replayed ? 200 : 201);
    return { created: !run.replayed, requestId: message.payload.request_id, seq: message.seq, kind: 'user.message', conversation_id: id, run_id: run.runId, delivery: 'queue' };
  });
};

/** The run's user.message as committed (a replay finds it among the run's first events). */
async function userMessageOf(run: Awaited<ReturnType<Engine['submit']>>) {
  for await (const event of run.events()) {
    if (event.kind === 'user.message') return event;
    if (event.kind === 'run.finished') break;
  }
  throw new AirlockError('CONFLICT', 'This request_id names a turn that wrote no message (a decision); use a new requestId.');
}
