/**
 * The curl call API (upstream `simple_predict_post` / `simple_predict_get`): `POST
 * /gradio_api/call/{api}` (and `/call/v2/{api}`) queues an event and answers `{event_id}`; `GET
 * /gradio_api/call/{api}/{event_id}` streams it as named SSE events. Each call runs in a session of
 * its own (the body's `session_hash`, upstream's session, reaches the handler as
 * `clientSessionHash`); with `identityKey`, only the identity that made the call may read it (404
 * otherwise).
 * Dropping the GET stream aborts the event, as it does for `/queue/data`. The call's record lives
 * on the session bus, so with several replicas the GET may land on another replica than the POST.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { identityOf, ownerOf } from '../auth.ts';
import { keywordArgs, positionalArgs } from '../call-args.ts';
import { CallStreamWriter } from '../call-stream.ts';
import type { GradioContext } from '../context.ts';
import { RequestRejectedError } from '../errors.ts';
import { sessionKey } from '../ownership.ts';
import { isRejection, normalizeInputs } from '../validate.ts';
import { onResponseClose, openStream } from './queue.ts';

/** The body's `session_hash` (upstream's SimplePredictBody), when it is a usable one. */
function bodySessionHash(body: unknown): string | undefined {
  const hash = body !== null && typeof body === 'object' ? (body as { session_hash?: unknown }).session_hash : undefined;
  return typeof hash === 'string' && hash.length > 0 && hash.length <= 256 ? hash : undefined;
}

/** Registers the call routes. */
export function registerCallRoutes(app: FastifyInstance, ctx: GradioContext): void {
  const endpointOf = (request: FastifyRequest) => {
    const apiName = (request.params as { api_name: string }).api_name;
    const index = ctx.endpoints.findIndex((e) => e.apiName === apiName);
    if (index < 0) throw new RequestRejectedError(404, `No endpoint named /${apiName}.`);
    return { index, endpoint: ctx.endpoints[index] };
  };

  const post = (v2: boolean) => async (request: FastifyRequest) => {
    const { index, endpoint } = endpointOf(request);
    const args = v2 ? keywordArgs(endpoint, request.body) : positionalArgs(request.body);
    if (isRejection(args)) throw new RequestRejectedError(args.status, args.detail, undefined, args.parameter);
    const data = normalizeInputs(endpoint, args.data);
    if (isRejection(data)) throw new RequestRejectedError(data.status, data.detail, undefined, data.parameter);
    const owner = ownerOf(request, ctx.options.identityKey);
    // Never the caller's own session_hash: the GET would take over that session's /queue/data stream.
    const sessionHash = `call_${randomUUID().replaceAll('-', '')}`;
    // Its session_hash still names the client's session for the handler (upstream's State key).
    const clientSessionHash = v2 ? undefined : bodySessionHash(request.body);
    const eventId = await ctx.queue.join({
      fnIndex: index,
      sessionHash,
      ...(clientSessionHash ? { clientSessionHash } : {}),
      data,
      eventData: null,
      identity: identityOf(request),
      owner,
      headers: request.headers,
    });
    // Unread past the orphan timeout, the event was aborted: the record expires with it.
    await ctx.queue.bus.putCall(eventId, { apiName: endpoint.apiName, sessionHash, owner }, (ctx.options.orphanTimeoutMs ?? 60_000) + 1_000);
    return { event_id: eventId };
  };

  const get = async (request: FastifyRequest, reply: import('fastify').FastifyReply) => {
    const { api_name: apiName, event_id: eventId } = request.params as { api_name: string; event_id: string };
    const owner = ownerOf(request, ctx.options.identityKey);
    // One reader, as upstream (its messages are consumed). Another identity's event reads as unknown.
    const sessionHash = await ctx.queue.bus.takeCall(eventId, apiName, owner);
    if (sessionHash === null) throw new RequestRejectedError(404, 'Event not found.');
    const writer = openStream(reply, (res) => new CallStreamWriter(res, { maxBytes: ctx.options.callStreamMaxBytes }));
    await ctx.streams.attachSession(sessionKey(sessionHash, owner), writer, undefined, onResponseClose(reply));
  };

  for (const prefix of ['/gradio_api/call', '/gradio_api/call/v2']) {
    const v2 = prefix.endsWith('v2');
    app.post(`${prefix}/:api_name`, post(v2));
    app.post(`${prefix}/:api_name/`, post(v2));
    app.get(`${prefix}/:api_name/:event_id`, get);
  }
}
