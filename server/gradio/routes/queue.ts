/**
 * `POST /gradio_api/queue/join` and the per-session `GET /gradio_api/queue/data` event stream.
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { identityOf, ownerOf } from '../auth.ts';
import { dependencyId } from '../config-builder.ts';
import type { GradioContext } from '../context.ts';
import { RequestRejectedError } from '../errors.ts';
import { sessionKey } from '../ownership.ts';
import { SseWriter } from '../sse-writer.ts';
import { isRejection, normalizeInputs, parseEnvelope } from '../validate.ts';

/** Opens an SSE response outside Fastify's reply cycle, keeping headers hooks already set (CORS). */
export function openStream(reply: FastifyReply, make: (res: FastifyReply['raw']) => SseWriter = (res) => new SseWriter(res)): SseWriter {
  const headers = reply.getHeaders() as Record<string, string>;
  reply.hijack();
  const writer = make(reply.raw);
  writer.open(headers);
  return writer;
}

/** Calls `listener` once the response is over: ended by us or dropped by the client. */
export const onResponseClose = (reply: FastifyReply) => (listener: () => void) => {
  reply.raw.once('close', listener);
};

/** Registers join and data. */
export function registerQueueRoutes(app: FastifyInstance, ctx: GradioContext): void {
  const join = async (request: FastifyRequest) => {
    const envelope = parseEnvelope(request.body);
    if (isRejection(envelope)) throw new RequestRejectedError(envelope.status, envelope.detail);
    const index = ctx.endpoints.findIndex((_, i) => dependencyId(i) === envelope.fnIndex);
    if (index < 0) throw new RequestRejectedError(422, `Unknown fn_index ${envelope.fnIndex}.`, undefined, 'fn_index');
    const data = normalizeInputs(ctx.endpoints[index], envelope.data);
    if (isRejection(data)) throw new RequestRejectedError(data.status, data.detail, undefined, data.parameter);
    const eventId = await ctx.queue.join({
      fnIndex: index,
      sessionHash: envelope.sessionHash,
      data,
      eventData: envelope.eventData,
      identity: identityOf(request),
      owner: ownerOf(request, ctx.options.identityKey),
      headers: request.headers,
    });
    return { event_id: eventId };
  };
  for (const path of ['/gradio_api/queue/join', '/gradio_api/queue/join/']) app.post(path, join);

  app.get('/gradio_api/queue/data', async (request, reply) => {
    const sessionHash = (request.query as Record<string, unknown>).session_hash;
    if (typeof sessionHash !== 'string' || sessionHash.length === 0) throw new RequestRejectedError(400, 'session_hash is required.');
    // Scoped by the caller's owner key: another user's session_hash names a session of the
    // caller's own (unknown, so "session not found"), never the owner's stream.
    const key = sessionKey(sessionHash, ownerOf(request, ctx.options.identityKey));
    const writer = openStream(reply);
    await ctx.streams.attachSession(key, writer, request.headers['user-agent'], onResponseClose(reply));
  });
}
