/**
 * Traces (seed 000): a run's durable record from the ledger (its events, final content, tool
 * calls, approvals), for every run (background, streamed and synchronous), tenant-scoped.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { pageEvents } from './agent-events.ts';
import { v1Caller } from './identity.ts';
import type { V1Deps } from './deps.ts';
import { listPage, visibleRun } from './runs-routes.ts';
import { EventsQuery, IdParams, ListQuery, parseWith } from './schemas.ts';
import { traceWire } from './serialize.ts';

export const traceRoutes: FastifyPluginAsync<V1Deps> = async (app, deps) => {
  app.get('/traces', async (request) => {
    const caller = v1Caller(request);
    const query = parseWith(ListQuery, { limit: 20, ...(request.query as object) });
    const { rows, nextBefore } = await listPage(deps, caller, query);
    const traces = [];
    for (const run of rows) traces.push(traceWire(run, await deps.runs.events(run)));
    return { traces, count: traces.length, next_before: nextBefore };
  });

  app.get('/traces/:id', async (request) => {
    const { id } = parseWith(IdParams, request.params);
    const run = await visibleRun(deps, v1Caller(request), id);
    return traceWire(run, await deps.runs.events(run));
  });

  app.get('/traces/:id/events', async (request) => {
    const { id } = parseWith(IdParams, request.params);
    const query = parseWith(EventsQuery, request.query);
    const run = await visibleRun(deps, v1Caller(request), id);
    return { run_id: run.id, ...pageEvents(await deps.runs.events(run), query.after_sequence, query.limit) };
  });
};
