/**
 * `GET /api/agent/v1/approvals/stream` (issue 26 item 1): the caller's pending approvals, live. An
 * SSE `approvals` frame carries the whole list (the v1 approval objects) at once and again whenever
 * it changed: any ledger commit (an approval opened, approved by one of several, decided, expired;
 * in any process: the ledger's NOTIFY) of a conversation of the caller's tenant. The process's one
 * shared listener (approvals-hub.ts, issue 36 item 4) reads the tenant's list once per change and
 * gives each stream its own part; a user holds at most APPROVAL_STREAMS_PER_USER of them here (429
 * RATE_LIMITED, Retry-After 5, beyond). The inbox page, the title's `(N)` and the sidebar's marks
 * read it. A comment every 15 s keeps proxies from closing it.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Ledger } from '../engine/index.ts';
import { openSseResponse, sseComment, sseFrame, writeNow } from '../http/index.ts';
import { createApprovalHub } from './approvals-hub.ts';
import type { V1Deps } from './deps.ts';
import { v1Caller } from './identity.ts';
import { listScope } from './runs-routes.ts';

const HEARTBEAT_MS = 15_000;

export const approvalStreamRoutes: FastifyPluginAsync<V1Deps & { ledger: Ledger; streamsPerUser: number }> = async (app, deps) => {
  const hub = createApprovalHub({ pool: deps.pool, ledger: deps.ledger, perUser: deps.streamsPerUser, log: app.log });
  app.addHook('onClose', async () => hub.stop());

  app.get('/approvals/stream', async (request, reply) => {
    const caller = v1Caller(request);
    const viewer = { ...listScope(caller), approver: { username: caller.username, role: caller.role }, capKey: `${caller.tenant}:${caller.userId}` };
    // Refused past the cap before the response opens (a plain 429); the first frame follows once read.
    let res: ReturnType<typeof openSseResponse> | null = null;
    const close = hub.open(viewer, (frame) => res && writeNow(res, sseFrame({ event: 'approvals', data: frame })));
    res = openSseResponse(reply);
    const heartbeat = setInterval(() => writeNow(res!, sseComment('ping')), HEARTBEAT_MS);
    request.raw.on('close', () => {
      close();
      clearInterval(heartbeat);
    });
  });
};
