/**
 * `POST /v1/chat/completions` (seed 000): one turn run in this process for the caller.
 * `stream: true` -> SSE, `event: <type>` + `data: <fastreact.agent_event.v1>`, answer text as
 * `token` deltas, ending `event: done` / `data: [DONE]`; on a pause `ask_user` then `session_end`
 * with status awaiting_approval. `stream: false` -> the seed's summary JSON (status, approval ids).
 * A client that goes away stops following only: the run is the engine's and finishes anyway.
 * @module
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { getAgentRun } from '../db/agent-runs.ts';
import { toAirlockError } from '../error-handler.ts';
import { AirlockError, isAirlockError, isErrorCode } from '../errors.ts';
import { openSseResponse, sseFrame, writeNow } from '../http/index.ts';
import { currentTimings } from '../timing/index.ts';
import { AGENT_EVENT_SCHEMA, envelope, liveNumbering, sessionStartBody, type AgentEventV1, type EventScope } from './agent-events.ts';
import { v1ErrorBody } from './errors.ts';
import { assertUserKey, v1Caller, type V1Caller } from './identity.ts';
import type { V1Deps } from './deps.ts';
import { followLiveRun } from './run-follow.ts';
import { runStatus } from './run-status.ts';
import { parseRunRequest, type RunRequest } from './schemas.ts';
import { resolveSession } from './sessions.ts';
import { summarize } from './serialize.ts';

/**
 * Pure: merges the token deltas of one answer segment (consecutive, one sequence: liveNumbering)
 * into one event, the one the replay holds, so the summary's `events` stay short and numbered as
 * /runs/{id}/events numbers them.
 */
export function mergeTokens(events: AgentEventV1[]): AgentEventV1[] {
  const merged: AgentEventV1[] = [];
  for (const e of events) {
    const last = merged.at(-1);
    if (e.type === 'token' && last?.type === 'token' && last.sequence === e.sequence) merged[merged.length - 1] = { ...last, content: (last.content ?? '') + (e.content ?? '') };
    else merged.push(e);
  }
  return merged;
}

/**
 * Pure: the taxonomy error a failed run ended with: the row's own (a run that failed itself), else
 * the first `error` event's code and words, else INTERNAL. An unknown code is INTERNAL.
 */
export function runFailure(run: { errorCode: string | null; errorMessage: string | null }, events: AgentEventV1[]): AirlockError {
  const event = events.find((e) => e.type === 'error');
  const end = events.findLast((e) => e.type === 'session_end');
  const code = run.errorCode ?? (event?.metadata?.code as string | undefined) ?? (end?.metadata?.error_code as string | undefined) ?? null;
  const message = run.errorCode ? run.errorMessage : (event?.content ?? (end?.metadata?.error_detail as string | undefined) ?? null);
  return isErrorCode(code) ? new AirlockError(code, message || undefined) : new AirlockError('INTERNAL', message || undefined);
}

/** While a streaming completion waits for a decision: a comment line this often (proxies keep it open). */
export const STREAM_HEARTBEAT_MS = 15_000;

export const completionRoutes: FastifyPluginAsync<V1Deps> = async (app, deps) => {
  app.post('/chat/completions', async (request, reply) => {
    const caller = v1Caller(request);
    const parsed = parseRunRequest(request.body);
    assertUserKey(caller, parsed.userKey);
    const input = await resolveSession(deps.pool, caller.userId, parsed);
    const started = Date.now();
    const admitted = deps.runs.admitLive(caller.userId);
    let released = false;
    const release = () => {
      if (!released) (released = true), admitted();
    };
    try {
      // The summary (stream: false), or nothing: the SSE response was written on the raw socket.
      return (await complete(request, reply, caller, input, started, release)) ?? reply;
    } finally {
      release();
    }
  });

  /** `release` frees the caller's live-run slot early: a stream waiting for a decision runs nothing. */
  async function complete(request: FastifyRequest, reply: FastifyReply, caller: V1Caller, input: RunRequest, started: number, release: () => void) {
    const run = await deps.runs.create(caller, input, input.stream ? 'stream' : 'sync');
    const handle = await deps.runs.startLive(run, caller);
    // session_id: the caller's own string when they gave an alias (issue 24), else the conversation.
    const sessionId = input.sessionRef ?? handle.conversationId;
    const scope: EventScope = { runId: run.id, sessionId };
    const first = envelope(scope, 1, run.createdAt.toISOString(), sessionStartBody({ text: run.text, userKey: run.userKey, metadata: run.metadata }));

    // Numbered as the replay numbers them (one sequence for an event, live or replayed).
    const number = liveNumbering(scope);
    if (!input.stream) {
      const events: AgentEventV1[] = [first];
      try {
        await deps.runs.drive(run.id, handle, (e) => {
          const event = number(e);
          if (event) events.push(event);
        });
      } catch (error) {
        if (!isAirlockError(error)) throw error;
        // Not committed (the run could not record its end): numbered after everything, live only.
        events.push(envelope(scope, events.at(-1)!.sequence + 1, new Date().toISOString(), { type: 'error', content: error.message, metadata: { code: error.code } }));
      }
      const settled = (await getAgentRun(deps.pool, run.id))!;
      const summary = summarize(events);
      const merged = mergeTokens(events);
      const status = runStatus(settled);
      if (status === 'failed') {
        // Seed 000 + issue 24: "Errors use the same shape with type=error and an error field", at
        // the code's HTTP status.
        const failure = runFailure(settled, events);
        reply.status(failure.status);
        return { ...v1ErrorBody(failure), run_id: run.id, session_id: sessionId, status, events: merged, duration_ms: Date.now() - started, timings: currentTimings(), metadata: { schema: AGENT_EVENT_SCHEMA, event_count: merged.length } };
      }
      return {
        type: 'chat.completion',
        run_id: run.id,
        session_id: sessionId,
        status,
        content: summary.content,
        events: merged,
        tool_calls: summary.toolCalls,
        approval_request_ids: summary.pendingApprovalIds,
        duration_ms: Date.now() - started,
        // Also the Server-Timing header (timing/fastify.ts), read a moment later.
        timings: currentTimings(),
        metadata: { schema: AGENT_EVENT_SCHEMA, event_count: merged.length },
      };
    }

    const res = openSseResponse(reply, { 'x-run-id': run.id });
    const write = (chunk: string) => void writeNow(res, chunk);
    let sequence = 1;
    let lastWrite = Date.now();
    const sent: AgentEventV1[] = [];
    const send = (event: AgentEventV1) => {
      sequence = event.sequence;
      lastWrite = Date.now();
      // The stream's own timings ride its end (no Server-Timing header on a stream).
      if (event.type === 'session_end') event = { ...event, metadata: { ...event.metadata, timings: currentTimings() } };
      sent.push(event);
      // An error event carries the seed's `error: {code, message}` too (issue 24).
      const data = event.type === 'error' ? { ...event, error: { code: isErrorCode(event.metadata.code) ? event.metadata.code : 'INTERNAL', message: event.content ?? '' } } : event;
      write(sseFrame({ event: event.type, data }));
    };
    send(first);
    // Queued behind the session's running answer (issue 24): said once, unnumbered (the replay has
    // no such event); the run's own events follow when its turn starts.
    if (handle.queued) write(sseFrame({ event: 'queued', data: { type: 'queued', position: handle.queued.position, run_id: run.id, session_id: sessionId } }));
    let gone = false;
    res.on('close', () => void (gone = true));
    const heartbeat = setInterval(() => {
      if (Date.now() - lastWrite >= STREAM_HEARTBEAT_MS) write(': heartbeat\n\n');
    }, Math.min(STREAM_HEARTBEAT_MS, 1000));
    heartbeat.unref();
    try {
      // Paused for an approval: by default the stream stays open (heartbeats while waiting) and
      // carries the rest of the run, wherever the decision is made, until it ends, is cancelled
      // or the approval expires (issue 24); stream_until "pause" ends it here, as before.
      const settled = await followLiveRun(deps, run, handle, scope, { send, until: input.streamUntil, onPause: release, gone: () => gone });
      // A run that failed with no error event of its own (its end says why): one before done.
      if (settled && runStatus(settled) === 'failed' && !sent.some((e) => e.type === 'error')) {
        const failure = runFailure(settled, sent);
        write(sseFrame({ event: 'error', data: { ...envelope(scope, ++sequence, new Date().toISOString(), { type: 'error', content: failure.message, metadata: { code: failure.code } }), ...v1ErrorBody(failure) } }));
      }
    } catch (error) {
      // The run could not commit its end, or be read back (the database went away, the pool gave no
      // connection in time): say so before done, as every route does (an outage is
      // SERVICE_UNAVAILABLE, retryable: db/unavailable.ts), INTERNAL only for the rest.
      const e = toAirlockError(error, request.id);
      if (!isAirlockError(error)) request.log[e.code === 'INTERNAL' ? 'error' : 'warn']({ err: error, runId: run.id }, 'headless stream failed');
      write(sseFrame({ event: 'error', data: { ...envelope(scope, ++sequence, new Date().toISOString(), { type: 'error', content: e.message, metadata: { code: e.code } }), ...v1ErrorBody(e) } }));
    } finally {
      clearInterval(heartbeat);
      write('event: done\ndata: [DONE]\n\n');
      res.end();
    }
    return undefined;
  }
};
