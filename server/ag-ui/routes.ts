/**
 * `POST /api/agent/ag-ui`: the AG-UI protocol (RunAgentInput in, an SSE stream of AG-UI events
 * out), a thin adapter over the engine like /chat.
 *
 *   bearer user token -> RunAgentInput (zod) -> the conversation of the caller's thread
 *   (threads.ts: a UUID is the conversation id, another string the caller's alias of one;
 *   unknown: created; another user's UUID: 404)
 *   -> Last-Event-ID?  reconnect: the run of this runId, snapshot first, then live
 *                      else: engine.submit per turn (input.ts) -> follow the last run
 *
 * Request errors (bad input 400, no token 401, a thread that is not yours 404, a busy thread
 * 409) are HTTP errors with the taxonomy body; once the stream is open, a failure is RUN_ERROR
 * with the taxonomy code. Each frame of a committed event carries the ledger seq as its SSE id.
 * The run belongs to the engine: a client that goes away only stops following it.
 * @module
 */
import { EventEncoder } from '@ag-ui/encoder';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { bearerUser, openSseResponse, parseInput, sseComment, writeNow, type UserAdmission, type VerifyUser } from '../http/index.ts';
import { findRunByRequest } from '../db/runs.ts';
import type { Pool } from '../db/index.ts';
import { toTurnError, type Engine, type Ledger, type TurnHandle } from '../engine/index.ts';
import { AirlockError, ERROR_CODES, isErrorCode } from '../errors.ts';
import { AG_UI_PATH, AgUiRunInput, lastEventId, requestOf, turnsOf } from './input.ts';
import { AgUiProjection, errorFrame, type Frame } from './projection.ts';
import { reconnectFrames, runFrames } from './run-stream.ts';
import { expiredApproval } from './interrupts.ts';
import { ownThread } from './threads.ts';

export { AG_UI_PATH };

export interface AgUiRoutesOptions {
  pool: Pool;
  ledger: Ledger;
  engine: Engine;
  verifyUser: VerifyUser;
  heartbeatMs: number;
  /** Per-user cap of streamed runs in this process, shared with v1 streams (429 RATE_LIMITED beyond). */
  admission: UserAdmission;
  now?: () => Date;
}

/** Follows an earlier turn of a multi-entry resume to its end; a failure ends the request. */
async function settle(run: TurnHandle): Promise<Frame | null> {
  for await (const e of run.events()) {
    if (e.kind === 'run.finished' && e.payload.status === 'failed') {
      const code = isErrorCode(e.payload.error_code) ? e.payload.error_code : 'INTERNAL';
      return errorFrame(code, e.payload.error_detail ?? ERROR_CODES[code].message);
    }
  }
  return null;
}

/** A run that fails before it starts anything: RUN_STARTED, RUN_ERROR. */
async function* failedRun(view: AgUiProjection, error: Frame): AsyncGenerator<Frame> {
  yield view.runStarted();
  yield error;
}

export const agUiRoutes: FastifyPluginAsync<AgUiRoutesOptions> = async (app, options) => {
  const { pool, engine } = options;
  const now = options.now ?? (() => new Date());
  const open = new Set<AbortController>();
  // Closing: open streams end (without a terminal event), so their clients reconnect elsewhere.
  app.addHook('preClose', async () => {
    for (const gone of open) gone.abort();
  });

  app.post(AG_UI_PATH, async (request, reply) => {
    // Bearer user token, as on every /api/agent route; the agent's tools forward it.
    const user = await bearerUser(request, options.verifyUser);
    const input = parseInput(AgUiRunInput, request.body, 'body');
    const resumeFrom = lastEventId(request.headers['last-event-id']);
    // Events echo the caller's threadId; the engine knows the conversation it maps to.
    const view = (engineRunId: string, answering?: string[]) => new AgUiProjection({ threadId: input.threadId, runId: input.runId, engineRunId, answering });

    if (resumeFrom !== null) {
      const conversationId = await ownThread(pool, { userId: user.userId, threadId: input.threadId });
      const run = await findRunByRequest(pool, { userId: user.userId, requestId: input.runId, conversationId });
      if (!run) throw new AirlockError('NOT_FOUND', 'No such run in this thread.');
      return stream(reply, reconnectFrames(options, view(run.id), run));
    }

    // Validated before the thread is touched: a bad input creates nothing.
    const wanted = requestOf(input);
    const { decisions } = wanted;
    const conversationId = await ownThread(pool, { userId: user.userId, threadId: input.threadId, create: wanted.message ? { text: wanted.message.text } : undefined });
    const turns = turnsOf(input, wanted, conversationId);
    // AG-UI: a stale resume is a RunError. Nothing is decided: cancelling it still goes through.
    const answering = decisions.filter((d) => d.resolved).map((d) => d.approvalId);
    const stale = await expiredApproval(pool, conversationId, answering, now());
    if (stale) return stream(reply, failedRun(view(''), errorFrame('APPROVAL_EXPIRED', `The approval ${stale} has expired; cancel the interrupt to continue the thread.`)));
    // Admission (issue 30 item 4): the slot is held until the run ends in this process, not until
    // its client leaves (the run goes on without it).
    const release = options.admission.admit(user.userId);
    let run: TurnHandle | undefined;
    try {
      for (const [i, turn] of turns.entries()) {
        // A message sent while the thread's agent runs waits for its turn (issue 24).
        run = await engine.submit(turn, user, { queue: true });
        if (i < turns.length - 1) {
          const failed = await settle(run);
          if (failed) {
            release();
            return stream(reply, failedRun(view(run.runId), failed));
          }
        }
      }
    } catch (error) {
      release();
      throw error;
    }
    const last = run!;
    last.finished().then(release, release);
    return stream(reply, runFrames(options, view(last.runId, answering), last.events(), last.conversationId, last.queued));
  });

  /** Writes frames as SSE until the run's end, the client's departure or the server's close. */
  async function stream(reply: FastifyReply, frames: AsyncGenerator<Frame>): Promise<void> {
    const encoder = new EventEncoder({ accept: 'text/event-stream' });
    const res = openSseResponse(reply);
    const gone = new AbortController();
    open.add(gone);
    res.once('close', () => gone.abort());
    const heartbeat = setInterval(() => writeNow(res, sseComment('heartbeat')), options.heartbeatMs);
    // An id-only frame has no data: AG-UI parsers skip it, EventSource moves its Last-Event-ID.
    const write = (f: Frame) => writeNow(res, (f.id === undefined ? '' : `id: ${f.id}\n`) + (f.event ? encoder.encodeSSE(f.event) : '\n'));
    const stopped = new Promise<void>((resolve) => gone.signal.addEventListener('abort', () => resolve(), { once: true }));
    try {
      for (;;) {
        const pending = frames.next();
        pending.catch(() => {}); // rethrown below unless the client left first
        const next = await Promise.race([pending, stopped.then(() => null)]);
        if (!next || next.done) break;
        write(next.value);
      }
    } catch (error) {
      const failure = toTurnError(error, reply.request.id);
      if (failure.code === 'INTERNAL') reply.request.log.error({ err: error }, 'AG-UI stream failed');
      write(errorFrame(failure.code, failure.message));
    } finally {
      clearInterval(heartbeat);
      open.delete(gone);
      void frames.return(undefined).catch(() => {});
      res.end();
    }
  }
};
