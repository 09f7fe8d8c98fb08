/**
 * One OpenAI call's answer, over the headless runs of server/v1 (the same engine, agent, tools,
 * policy, admission and audit as v1's completions, one run per call):
 *
 *   admit (per-user cap, 429) -> run row -> first turn -> `started` (the stream opens here)
 *   -> text: the first turn's token deltas; a pause's words and link (notice.ts), then the rest of
 *      the run after the decision, wherever it is made (followLiveRun), to the end
 *   -> failure? (the taxonomy error the run ended with) -> the transcript's new key (conversation.ts)
 *
 * Errors before `started` are the request's (thrown); after it, the answer's `failure`. A client
 * that goes away stops the following only: the run is the engine's and finishes anyway, and never
 * executes a call without its decision.
 * @module
 */
import { AirlockError, isAirlockError } from '../errors.ts';
import type { V1Caller, V1Deps } from '../v1/face.ts';
import { followLiveRun, runFailure, runStatus, type AgentEventV1, type RunRequest } from '../v1/face.ts';
import { rememberTranscript } from './conversation.ts';
import { approvalNotice } from './notice.ts';
import type { ChatInput } from './request.ts';
import type { AnswerScope } from './wire.ts';

export interface AnswerOptions {
  /** Where the inbox and decision links are (PUBLIC_URL, else the request's origin). */
  origin: string;
  /** The conversation this call continues, or null for a new one. */
  conversationId: string | null;
  /** The run started: the scope every part of the answer carries. */
  started(scope: AnswerScope): void;
  /** A piece of the answer's text, in order. */
  text(piece: string): void;
  /** True once the client went away. */
  gone(): boolean;
}

export interface Answer {
  scope: AnswerScope;
  content: string;
  /** Why the run failed, or null (done, denied, expired, cancelled: the answer says so itself). */
  failure: AirlockError | null;
}

/** The run's request as v1's runs take it: the caller's system text, no policy of its own. */
function runRequest(input: ChatInput, conversationId: string | null): RunRequest {
  return { text: input.text, system: input.system, sessionId: conversationId, sessionRef: null, userKey: null, toolPolicy: null, metadata: { face: 'openai' }, runId: null, stream: input.stream, streamUntil: 'end' };
}

export async function answer(deps: V1Deps, caller: V1Caller, input: ChatInput, o: AnswerOptions): Promise<Answer> {
  const admitted = deps.runs.admitLive(caller.userId);
  let released = false;
  const release = () => {
    if (!released) (released = true), admitted();
  };
  try {
    const run = await deps.runs.create(caller, runRequest(input, o.conversationId), input.stream ? 'stream' : 'sync');
    const handle = await deps.runs.startLive(run, caller);
    const scope: AnswerScope = { id: `chatcmpl-${run.id}`, created: Math.floor(run.createdAt.getTime() / 1000), conversationId: handle.conversationId };
    o.started(scope);
    let content = '';
    const say = (piece: string) => {
      if (!piece) return;
      content += piece;
      o.text(piece);
    };
    // A pause's words need a query (the caller's link): later pieces wait their turn behind it. A
    // failure there is awaited below (never an unhandled rejection) and fails the answer.
    let said = Promise.resolve();
    const events: AgentEventV1[] = [];
    const send = (e: AgentEventV1) => {
      events.push(e);
      if (e.type === 'token') said = said.then(() => say(e.content ?? ''));
      else if (e.type === 'ask_user' && e.approval_request_id) {
        const approvalId = e.approval_request_id;
        said = said.then(() => approvalNotice(deps.pool, { origin: o.origin, callerId: caller.userId, approvalId, prompt: e.content ?? '' })).then(say);
        said.catch(() => {}); // handled: the await below rethrows it
      }
    };
    let failure: AirlockError | null = null;
    try {
      const settled = await followLiveRun(deps, run, handle, { runId: run.id, sessionId: handle.conversationId }, { send, until: 'end', onPause: release, gone: o.gone });
      await said;
      if (settled && runStatus(settled) === 'failed') failure = runFailure(settled, events);
    } catch (error) {
      // The run could not commit its end (the database went away).
      failure = isAirlockError(error) ? error : new AirlockError('INTERNAL', `Something went wrong on our side (reference ${run.id}).`, { cause: error });
    }
    if (!failure && !o.gone()) await rememberTranscript(deps.pool, caller.userId, handle.conversationId, [...input.prior, { role: 'user', text: input.text }, { role: 'assistant', text: content }]);
    return { scope, content, failure };
  } finally {
    release();
  }
}
