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
import { AirlockError, isAirlockError } from '../errors.ts';
import { openSseResponse, sseFrame, writeNow } from '../http/index.ts';
import { AGENT_EVENT_SCHEMA, envelope, liveNumbering, sessionStartBody, type AgentEventV1, type EventScope } from './agent-events.ts';
import { v1ErrorBody } from './errors.ts';
import { assertUserKey, v1Caller, type V1Caller } from './identity.ts';
import type { V1Deps } from './deps.ts';
import { runStatus } from './run-status.ts';
import { parseRunRequest, type RunRequest } from './schemas.ts';
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

export const completionRoutes: FastifyPluginAsync<V1Deps> = async (app, deps) => {
  app.post('/chat/completions', async (request, reply) => {
    const caller = v1Caller(request);
    const input = parseRunRequest(request.body);
    assertUserKey(caller, input.userKey);
    const started = Date.now();
    const release = deps.runs.admitLive(caller.userId);
    try {
      // The summary (stream: false), or nothing: the SSE response was written on the raw socket.
      return (await complete(request, reply, caller, input, started)) ?? reply;
    } finally {
      release();
    }
  });

  async function complete(request: FastifyRequest, reply: FastifyReply, caller: V1Caller, input: RunRequest, started: number) {
    const run = await deps.runs.create(caller, input, input.stream ? 'stream' : 'sync');
    const handle = await deps.runs.startLive(run, caller);
    const scope: EventScope = { runId: run.id, sessionId: handle.conversationId };
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
      return {
        type: 'chat.completion',
        run_id: run.id,
        session_id: handle.conversationId,
        status: runStatus(settled),
        content: summary.content,
        events: merged,
        tool_calls: summary.toolCalls,
        approval_request_ids: summary.pendingApprovalIds,
        duration_ms: Date.now() - started,
        metadata: { schema: AGENT_EVENT_SCHEMA, event_count: merged.length },
      };
    }

    const res = openSseResponse(reply, { 'x-run-id': run.id });
    const write = (chunk: string) => void writeNow(res, chunk);
    let sequence = 1;
    const send = (event: AgentEventV1) => {
      sequence = event.sequence;
      write(sseFrame({ event: event.type, data: event }));
    };
    send(first);
    try {
      await deps.runs.drive(run.id, handle, (e) => {
        const event = number(e);
        if (event) send(event);
      });
    } catch (error) {
      // The run could not commit its end (the database went away): say so before done.
      const e = isAirlockError(error) ? error : new AirlockError('INTERNAL', `Something went wrong on our side (reference ${request.id}).`);
      if (!isAirlockError(error)) request.log.error({ err: error, runId: run.id }, 'headless stream failed');
      write(sseFrame({ event: 'error', data: { ...envelope(scope, ++sequence, new Date().toISOString(), { type: 'error', content: e.message, metadata: { code: e.code } }), ...v1ErrorBody(e) } }));
    } finally {
      write('event: done\ndata: [DONE]\n\n');
      res.end();
    }
    return undefined;
  }
};
