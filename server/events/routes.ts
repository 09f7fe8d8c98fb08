/**
 * The conversation event routes of the gateway role (only it sees partial tokens):
 *   GET /api/agent/conversations/:id/events?after=&limit=      a page of committed events
 *   GET /api/agent/conversations/:id/events/stream?after=&partials=&snapshot=  SSE, resumable by Last-Event-ID
 *   POST /api/agent/conversations/:id/events                   seed 001's edge write: user input (edge-writes.ts)
 *   GET|DELETE /api/agent/conversations/:id/queue[/:request_id]  queued input (queue-routes.ts)
 *   POST /api/agent/conversations/:id/branch {branch}          the branch switch (issue 29): branch.switched
 *   POST /api/agent/conversations/:id/cancel                   Stop for the running answer (queued messages stay)
 *   GET /api/agent/v1/capabilities                             public: what this server offers
 * On close every open stream gets its remaining events, then `event: drain`.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { parseInput } from '../http/validate.ts';
import type { Pool } from '../db/index.ts';
import { branchOf, type Engine, type Ledger } from '../engine/index.ts';
import { AirlockError } from '../errors.ts';
import { processMetrics } from '../metrics/index.ts';
import { ownConversation, type VerifyUser } from '../http/bearer-user.ts';
import { capabilities } from './capabilities.ts';
import { edgeWriteRoutes } from './edge-writes.ts';
import { queueRoutes } from './queue-routes.ts';
import { EventStream } from './event-stream.ts';
import { ConversationParams, EventsPageQuery, EventsStreamQuery, SwitchBranchBody } from './schemas.ts';
import { resumeCursor } from '../http/sse-format.ts';
import { openSseResponse, writeNow } from '../http/sse-response.ts';

export interface EventRoutesOptions {
  pool: Pool;
  ledger: Ledger;
  engine: Engine;
  verifyUser: VerifyUser;
  heartbeatMs: number;
  drainRetryAfterMs: number;
}

export const eventRoutes: FastifyPluginAsync<EventRoutesOptions> = async (app, options) => {
  const open = new Set<{ stream: EventStream; done: Promise<void> }>();
  await app.register(edgeWriteRoutes, options);
  await app.register(queueRoutes, options);

  app.addHook('preClose', async () => {
    for (const s of open) s.stream.drain(options.drainRetryAfterMs);
    await Promise.race([Promise.allSettled([...open].map((s) => s.done)), new Promise((r) => setTimeout(r, 5_000).unref())]);
  });

  app.get('/api/agent/v1/capabilities', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return capabilities({ heartbeatMs: options.heartbeatMs, drainRetryAfterMs: options.drainRetryAfterMs });
  });

  app.get('/api/agent/conversations/:id/events', async (request, reply) => {
    const { id } = parseInput(ConversationParams, request.params, 'params');
    const { after, limit, branch } = parseInput(EventsPageQuery, request.query, 'query');
    await ownConversation(request, options, id);
    const rows = await options.ledger.read(id, { after, limit: limit + 1 });
    const page = rows.slice(0, limit);
    // `?branch=` filters the page it read: `next_after` still moves past the events it left out.
    const events = page.filter((e) => branch === undefined || branchOf(e.payload) === branch).map(({ seq, kind, payload, created_at }) => ({ seq, kind, payload, created_at }));
    reply.header('cache-control', 'no-store');
    return { events, next_after: page.at(-1)?.seq ?? after, has_more: rows.length > limit };
  });

  // The branch switch `‹ 1/2 ›` (issue 29): the conversation shows and continues on `branch`.
  app.post('/api/agent/conversations/:id/branch', async (request) => {
    const { id } = parseInput(ConversationParams, request.params, 'params');
    const { branch } = parseInput(SwitchBranchBody, request.body, 'body');
    await ownConversation(request, options, id);
    const event = await options.engine.switchBranch(id, branch);
    return { conversation_id: id, active_branch: branch, seq: event.seq };
  });

  // Stop for a page that follows an answer it no longer submits (reloaded while it ran, issue 30).
  // The run must stream in this process; a replica's run is stopped through its own.
  app.post('/api/agent/conversations/:id/cancel', async (request, reply) => {
    const { id } = parseInput(ConversationParams, request.params, 'params');
    await ownConversation(request, options, id);
    if (!options.engine.cancelConversation(id)) throw new AirlockError('CONFLICT', 'No answer of this conversation is running here.');
    reply.code(202);
    return { conversation_id: id, cancelled: true };
  });

  app.get('/api/agent/conversations/:id/events/stream', async (request, reply) => {
    const { id } = parseInput(ConversationParams, request.params, 'params');
    const query = parseInput(EventsStreamQuery, request.query, 'query');
    await ownConversation(request, options, id);
    const after = resumeCursor({ lastEventId: request.headers['last-event-id'], after: query.after });

    const res = openSseResponse(reply);
    writeNow(res, ': open\n\n');
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const stream = new EventStream({
      ledger: options.ledger,
      conversationId: id,
      after,
      partials: query.partials,
      // Seed 001: a reconnect (Last-Event-ID) gets committed events only; nothing is replayed.
      snapshot: query.snapshot && request.headers['last-event-id'] === undefined,
      liveRun: () => options.engine.liveRun(id),
      heartbeatMs: options.heartbeatMs,
      write: (chunk) => void writeNow(res, chunk),
      signal: gone.signal,
    });
    const entry = { stream, done: stream.run() };
    open.add(entry);
    const gauge = processMetrics().openStreams;
    gauge.inc({ kind: 'conversation' });
    try {
      await entry.done;
    } catch (error) {
      request.log.warn({ err: error, conversationId: id }, 'event stream failed');
    } finally {
      gauge.dec({ kind: 'conversation' });
      open.delete(entry);
      res.end();
    }
  });
};
