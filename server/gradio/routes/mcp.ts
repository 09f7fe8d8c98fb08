/**
 * Gradio's MCP server paths under `/gradio_api/mcp`: streamable HTTP (stateless, as upstream) at
 * `/` and `/http/`, the older SSE transport at `/sse` + `/messages/`, and `/schema` (upstream's
 * tool list for the Hugging Face MCP server). Every path needs the caller's credentials like any
 * Gradio route (bearer or `/login` cookie); tools run with that identity. An SSE session belongs
 * to its opener: another identity posting to its session id gets a 404. The SSE stream stays on
 * the replica that opened it; its `/messages/` POSTs may land on any replica and reach it through
 * the session bus's mailboxes (one process: delivered at once). Every path first checks Host and
 * Origin against DNS rebinding (mcp/origin.ts; 403 otherwise). `/gradio_api/mcp` is served with and
 * without its trailing slash (the MCP Inspector rewrites paths not ending in `/mcp`).
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { identityOf, ownerOf } from '../auth.ts';
import type { GradioContext } from '../context.ts';
import { RequestRejectedError } from '../errors.ts';
import { createMcpServer, selectedTools, type McpCaller } from '../mcp/server.ts';
import { mcpOriginRefusal } from '../mcp/origin.ts';
import { mcpTools } from '../mcp/tools.ts';
import type { OwnerKey } from '../ownership.ts';

/** Open SSE sessions at once; more are refused with 503 (each holds a connection). */
const SSE_SESSIONS_MAX = 256;
/** Open SSE sessions of one owner; more are refused with 429, so one user cannot take them all. */
const SSE_SESSIONS_PER_OWNER = 8;

/** Registers the MCP routes. */
export function registerMcpRoutes(app: FastifyInstance, ctx: GradioContext): void {
  if (!ctx.options.mcpServer) return;
  // Each MCP route's first hook: a rebinding page is refused whatever its browser sends.
  const onRequest = async (request: FastifyRequest) => {
    const refusal = mcpOriginRefusal(request.headers, ctx.options.publicUrl);
    if (refusal) throw new RequestRejectedError(403, refusal, 'FORBIDDEN');
  };
  const sse = new Map<string, { transport: SSEServerTransport; owner: OwnerKey }>();
  const caller = (request: FastifyRequest, canElicit: boolean): McpCaller => ({
    identity: identityOf(request),
    owner: ownerOf(request, ctx.options.identityKey),
    headers: request.headers,
    canElicit,
    // `?tools=` on the streamable request, or on the SSE stream's opening GET (its session's choice).
    selected: selectedTools(request.query),
  });

  // Stateless: one server and transport per HTTP request, closed with its response.
  const streamable = async (request: FastifyRequest, reply: FastifyReply) => {
    // Stateless: the answer to a server->client request would reach another instance, so no elicitation.
    const server = createMcpServer(ctx, caller(request, false), request.log);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    reply.hijack();
    // server.close() closes the transport too (closing both re-enters each other's onclose).
    reply.raw.once('close', () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  };
  for (const path of ['/gradio_api/mcp', '/gradio_api/mcp/', '/gradio_api/mcp/http', '/gradio_api/mcp/http/']) {
    app.route({ method: ['GET', 'POST', 'DELETE'], url: path, onRequest, handler: streamable });
  }

  app.get('/gradio_api/mcp/sse', { onRequest }, async (request, reply) => {
    if (sse.size >= SSE_SESSIONS_MAX) throw new RequestRejectedError(503, 'Too many MCP SSE sessions are open; use the streamable HTTP endpoint.', 'SERVICE_UNAVAILABLE');
    const owner = ownerOf(request, ctx.options.identityKey);
    if (owner !== null && [...sse.values()].filter((s) => s.owner === owner).length >= SSE_SESSIONS_PER_OWNER) {
      throw new RequestRejectedError(429, `At most ${SSE_SESSIONS_PER_OWNER} MCP SSE sessions per user; close one first.`, 'RATE_LIMITED');
    }
    reply.hijack();
    const transport = new SSEServerTransport(`${ctx.mountPath}/gradio_api/mcp/messages/`, reply.raw);
    const server = createMcpServer(ctx, caller(request, true), request.log);
    sse.set(transport.sessionId, { transport, owner });
    // Messages posted on any replica (this one included) arrive here, in the order they were posted.
    const mailbox = ctx.queue.bus.openMailbox(transport.sessionId, owner, (payload) => {
      transport.handleMessage(JSON.parse(payload)).catch((error) => request.log.warn({ err: error }, 'gradio MCP message failed'));
    });
    // The server sets the transport's onclose; closing it once (from either end) is enough.
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      sse.delete(transport.sessionId);
      void mailbox.then((box) => box.close()).catch(() => {});
      void server.close();
    };
    reply.raw.once('close', close);
    try {
      await mailbox;
    } catch (error) {
      request.log.warn({ err: error }, 'gradio MCP mailbox failed');
      reply.raw.destroy();
      return;
    }
    await server.connect(transport);
    server.onclose = close;
  });

  // As the SDK's handlePostMessage, but the message goes through the bus to whichever replica holds the stream.
  const post = async (request: FastifyRequest, reply: FastifyReply) => {
    const id = (request.query as Record<string, unknown>).sessionId;
    const owner = ownerOf(request, ctx.options.identityKey);
    if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) throw new RequestRejectedError(400, 'The message must be application/json.');
    const message = JSONRPCMessageSchema.safeParse(request.body);
    if (!message.success) throw new RequestRejectedError(400, 'Invalid message: not a JSON-RPC message.');
    const sent = typeof id === 'string' ? await ctx.queue.bus.postMailbox(id, owner, JSON.stringify(message.data)) : 'unknown';
    // Another identity's session reads as unknown: nothing to learn about it.
    if (sent !== 'sent') throw new RequestRejectedError(404, 'Session not found.');
    return reply.code(202).type('text/plain').send('Accepted');
  };
  for (const path of ['/gradio_api/mcp/messages', '/gradio_api/mcp/messages/']) app.post(path, { onRequest }, post);

  app.get('/gradio_api/mcp/schema', { onRequest }, async () =>
    mcpTools(ctx.endpoints).map((tool) => ({
      ...tool,
      meta: { file_data_present: false, mcp_type: 'tool', endpoint_name: tool.name },
    })),
  );

  app.addHook('preClose', async () => {
    await Promise.all([...sse.values()].map(({ transport }) => transport.close().catch(() => {})));
  });
}
