/**
 * The offline model over HTTP: a thin OpenAI-compatible Fastify plugin around respond.ts.
 * `POST /v1/chat/completions` (stream true/false), `GET /v1/models`, `POST /v1/embeddings`.
 * @module
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { completionBody, estimateUsage, newCompletionId, streamChunks } from './completion.ts';
import { EMBEDDING_DIMENSIONS, hashEmbed } from './embeddings.ts';
import { respond, textOf, type ChatMessageIn, type OfferedTool } from './respond.ts';

export interface OfflineModelOptions {
  /** Pause between streamed chunks (words), in milliseconds. Default 25. */
  delayMs?: number;
  /** The id `GET /v1/models` lists. Default `airlock-offline-1`. */
  modelName?: string;
}

interface ChatRequest {
  model?: string;
  messages?: ChatMessageIn[];
  tools?: Array<{ type?: string; function?: OfferedTool }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

function badRequest(reply: FastifyReply, message: string) {
  return reply.status(400).send({ error: { message, type: 'invalid_request_error', code: null } });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The offline model as a Fastify plugin; register it under a prefix such as `/api/offline-model`. */
export const offlineModelRoutes: FastifyPluginAsync<OfflineModelOptions> = async (app, opts) => {
  const delayMs = opts.delayMs ?? 25;
  const modelName = opts.modelName ?? 'airlock-offline-1';

  app.get('/v1/models', async () => ({
    object: 'list',
    data: [{ id: modelName, object: 'model', created: 0, owned_by: 'airlock' }],
  }));

  app.post('/v1/embeddings', async (request, reply) => {
    const body = (request.body ?? {}) as { input?: string | string[]; model?: string };
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(inputs) || inputs.some((i) => typeof i !== 'string')) return badRequest(reply, 'input must be a string or an array of strings');
    const usage = estimateUsage(inputs.join(' '), '');
    return {
      object: 'list',
      model: body.model ?? modelName,
      data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: hashEmbed(text) })),
      usage: { prompt_tokens: usage.prompt_tokens, total_tokens: usage.prompt_tokens },
      dimensions: EMBEDDING_DIMENSIONS,
    };
  });

  app.post('/v1/chat/completions', async (request, reply) => {
    const body = (request.body ?? {}) as ChatRequest;
    if (!Array.isArray(body.messages) || body.messages.length === 0) return badRequest(reply, 'messages must be a non-empty array');
    const tools = (body.tools ?? []).flatMap((t) => (t.function?.name ? [t.function] : []));
    const decision = respond(body.messages, tools);
    const base = { id: newCompletionId(), model: body.model ?? modelName, created: Math.floor(Date.now() / 1000) };
    const completionText = decision.type === 'text' ? decision.text : JSON.stringify(decision.calls);
    const usage = estimateUsage(body.messages.map(textOf).join(' '), completionText);

    if (!body.stream) return completionBody(base, decision, usage);

    const chunks = streamChunks(base, decision, body.stream_options?.include_usage ? usage : null);
    let closed = false;
    // The response's close (not the request's: that fires once the body is read) means the client left.
    reply.raw.on('close', () => (closed = true));
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (const [i, c] of chunks.entries()) {
      if (closed) return;
      // Pace only the content words, so tool calls and framing stay instant.
      if (delayMs > 0 && i > 0 && decision.type === 'text' && i <= chunks.length - 2) await sleep(delayMs);
      reply.raw.write(`data: ${JSON.stringify(c)}\n\n`);
    }
    reply.raw.end('data: [DONE]\n\n');
  });
};

/** The plugin bound to options, for `app.register(createOfflineModelRoutes({delayMs}), {prefix})`. */
export function createOfflineModelRoutes(options: OfflineModelOptions = {}): FastifyPluginAsync {
  return async (app) => offlineModelRoutes(app, options);
}
