/**
 * The OpenAI-compatible face (issue 43 item 4) at `/api/agent/openai/v1`, served by the gateway
 * role beside v1 and AG-UI: a transport over the same runs, so any OpenAI client (the official SDK,
 * LangChain's ChatOpenAI, Open WebUI…) talks to the agent with its tools, policy and approvals.
 *
 *   GET  /models            -> {object: list, data: [{id: "airlock"}]}
 *   POST /chat/completions  -> stream: false  one chat.completion (after any approval wait)
 *                              stream: true   chat.completion.chunk deltas, `: ping` comments while
 *                                             it waits, a last chunk with finish_reason, data: [DONE]
 *
 * Callers authenticate as on v1 (a user token; the service token with X-User-JWT). Errors are
 * OpenAI's envelope (wire.ts) at the taxonomy's status: before the stream opens as the HTTP answer,
 * after it as a `data: {"error": …}` chunk (which the SDK raises), then [DONE].
 * @module
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { toAirlockError } from '../error-handler.ts';
import { AirlockError } from '../errors.ts';
import { openSseResponse, sseComment, writeNow } from '../http/index.ts';
import { useErrorBodies, v1Authenticate, v1Caller, v1ResolveUserKey, type V1Deps, type V1IdentityDeps } from '../v1/face.ts';
import { answer, type Answer } from './answer.ts';
import { findConversation } from './conversation.ts';
import { CONVERSATION_HEADER, parseChatRequest } from './request.ts';
import { chunkBody, completionBody, errorBody, MODEL_ID, modelBody, usageOf, type AnswerScope } from './wire.ts';

export const OPENAI_PREFIX = '/api/agent/openai/v1';

export interface OpenAiRoutesOptions {
  deps: V1Deps;
  identity: V1IdentityDeps;
  /** How long a stream stays silent before a `: ping` comment (EVENTS_HEARTBEAT_MS). */
  heartbeatMs: number;
}

const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

export const openAiRoutes: FastifyPluginAsync<OpenAiRoutesOptions> = async (app, { deps, identity, heartbeatMs }) => {
  useErrorBodies(app, errorBody);
  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(errorBody(new AirlockError('NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`)));
  });
  app.addHook('onRequest', v1Authenticate(identity));
  app.addHook('preHandler', v1ResolveUserKey(identity));

  app.get('/models', async () => ({ object: 'list', data: [modelBody()] }));
  app.get<{ Params: { id: string } }>('/models/:id', async (request) => {
    if (request.params.id !== MODEL_ID) throw new AirlockError('NOT_FOUND', `The model ${request.params.id.slice(0, 200)} does not exist; this server has one: ${MODEL_ID}.`);
    return modelBody();
  });

  app.post('/chat/completions', async (request, reply) => {
    const caller = v1Caller(request);
    const input = parseChatRequest(request.body, request.headers);
    const conversationId = await findConversation(deps.pool, caller.userId, input);
    const origin = deps.publicUrl ?? `${request.protocol}://${request.host}`;
    let gone = false;
    reply.raw.once('close', () => void (gone = !reply.raw.writableFinished));
    const options = { origin, conversationId, gone: () => gone };
    if (!input.stream) {
      const result = await answer(deps, caller, input, { ...options, started: () => {}, text: () => {} });
      reply.header(CONVERSATION_HEADER, result.scope.conversationId);
      if (result.failure) return reply.status(result.failure.status).send({ ...errorBody(result.failure), conversation_id: result.scope.conversationId });
      return completionBody(result.scope, result.content, usageOf(null));
    }
    await streamAnswer(reply, input.includeUsage, (started, text) => answer(deps, caller, input, { ...options, started, text }));
    return undefined;
  });

  /** The answer as chunks on an SSE response, opened when its run starts (errors before that are HTTP errors). */
  async function streamAnswer(reply: FastifyReply, includeUsage: boolean, run: (started: (s: AnswerScope) => void, text: (piece: string) => void) => Promise<Answer>) {
    let write = (_: string) => {};
    let lastWrite = Date.now();
    let scope: AnswerScope | undefined;
    const heartbeat = setInterval(() => {
      if (Date.now() - lastWrite >= heartbeatMs) write(sseComment('ping'));
    }, Math.min(heartbeatMs, 1000));
    heartbeat.unref();
    const started = (s: AnswerScope) => {
      scope = s;
      const res = openSseResponse(reply, { [CONVERSATION_HEADER]: s.conversationId });
      write = (chunk) => {
        lastWrite = Date.now();
        writeNow(res, chunk);
      };
      write(data(chunkBody(s, { role: 'assistant', content: '' })));
    };
    try {
      const result = await run(started, (piece) => write(data(chunkBody(scope!, { content: piece }))));
      if (result.failure) write(data({ ...errorBody(result.failure), conversation_id: result.scope.conversationId }));
      else {
        write(data(chunkBody(result.scope, { finish: 'stop' })));
        if (includeUsage) write(data(chunkBody(result.scope, { usage: usageOf(null) })));
      }
      write('data: [DONE]\n\n');
    } catch (error) {
      if (!scope) throw error;
      // The stream is open: the failure goes in it (the run itself is the engine's and ends on its own).
      const e = toAirlockError(error, reply.request.id);
      if (e.code === 'INTERNAL') reply.request.log.error({ err: error }, 'OpenAI face stream failed');
      write(data({ ...errorBody(e), conversation_id: scope.conversationId }));
      write('data: [DONE]\n\n');
    } finally {
      clearInterval(heartbeat);
      if (scope) reply.raw.end();
    }
  }
};
