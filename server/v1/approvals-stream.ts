/**
 * `GET /api/agent/v1/approvals/stream` (issue 26 item 1): the caller's pending approvals, live. An
 * SSE `approvals` frame carries the whole list (the v1 approval objects) at once and again whenever
 * it changed: any ledger commit of any conversation (an approval opened, approved by one of
 * several, decided, expired; in any process: the ledger's NOTIFY) wakes the stream, which reads the
 * list again (debounced) and sends it only when it differs. The inbox page, the title's `(N)` and
 * the sidebar's marks read it. A comment every 15 s keeps proxies from closing it.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { listApprovalRecords } from '../db/approval-records.ts';
import { ANY_CONVERSATION, type Ledger } from '../engine/index.ts';
import { openSseResponse, sseComment, sseFrame, writeNow } from '../http/index.ts';
import type { V1Deps } from './deps.ts';
import { v1Caller } from './identity.ts';
import { listScope } from './runs-routes.ts';
import { approvalWire } from './serialize.ts';

const HEARTBEAT_MS = 15_000;
/** Commits in a burst (a run's events) read the list once. */
const DEBOUNCE_MS = 150;
/** The most approvals one frame lists. */
const MAX_LISTED = 200;

export const approvalStreamRoutes: FastifyPluginAsync<V1Deps & { ledger: Ledger }> = async (app, deps) => {
  app.get('/approvals/stream', async (request, reply) => {
    const caller = v1Caller(request);
    const scope = { ...listScope(caller), approver: { username: caller.username, role: caller.role }, status: 'pending' as const, limit: MAX_LISTED };
    const res = openSseResponse(reply);
    let last = '';
    let timer: NodeJS.Timeout | null = null;
    let reading = Promise.resolve();
    const send = () =>
      (reading = reading.then(async () => {
        const rows = await listApprovalRecords(deps.pool, scope);
        const body = JSON.stringify({ approvals: rows.map(approvalWire) });
        if (body === last) return;
        last = body;
        writeNow(res, sseFrame({ event: 'approvals', data: JSON.parse(body) }));
      }).catch((err) => request.log.warn({ err }, 'the approvals stream could not read the list')));
    const wake = () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        void send();
      }, DEBOUNCE_MS);
    };
    const unsubscribe = deps.ledger.subscribe(ANY_CONVERSATION, wake);
    const heartbeat = setInterval(() => writeNow(res, sseComment('ping')), HEARTBEAT_MS);
    request.raw.on('close', () => {
      unsubscribe();
      clearInterval(heartbeat);
      if (timer) clearTimeout(timer);
    });
    await send();
  });
};
