/**
 * The OpenAI Chat Completions wire shapes the face answers with (pure): a whole completion
 * (`choices[0].message`), the stream's `chat.completion.chunk`s, `usage`, the model list and the
 * error envelope `{error: {message, type, param, code}}` (More decisions 7), its `code` a code of
 * Airlock's taxonomy and its `type` OpenAI's word for the status. Checked against the official
 * SDK's own types (`openai`, type-only), so a field the SDK reads cannot go missing unnoticed.
 * Every answer also carries `conversation_id`: the conversation it continued or started.
 * @module
 */
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { Model } from 'openai/resources/models';
import type { AirlockError } from '../errors.ts';

/** The one model id the face lists; any `model` a request names runs the same agent. */
export const MODEL_ID = 'airlock';

/** The id, creation time and conversation every part of one answer shares. */
export interface AnswerScope {
  id: string;
  created: number;
  conversationId: string;
}

/** Why an answer ended, in OpenAI's words: it ended (`stop`), whether done, denied, expired or cancelled. */
export type FinishReason = 'stop';

/**
 * Usage as OpenAI reports it. The ledger does not record the model's token counts yet (issue 43
 * item 2 adds `tokens` to run.finished), so until then the counts are 0: never made up.
 */
export function usageOf(tokens: { input: number; output: number } | null): CompletionUsage {
  const input = tokens?.input ?? 0;
  const output = tokens?.output ?? 0;
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}

export function completionBody(scope: AnswerScope, content: string, usage: CompletionUsage) {
  return {
    id: scope.id,
    object: 'chat.completion',
    created: scope.created,
    model: MODEL_ID,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' as FinishReason }],
    usage,
    conversation_id: scope.conversationId,
  } satisfies ChatCompletion & { conversation_id: string };
}

/** One streamed chunk: a delta of the answer, or its end (`finish`), or (`usage`) the last chunk with no choices. */
export function chunkBody(scope: AnswerScope, part: { role?: 'assistant'; content?: string; finish?: FinishReason; usage?: CompletionUsage }) {
  const delta = { ...(part.role ? { role: part.role } : {}), ...(part.content !== undefined ? { content: part.content } : {}) };
  return {
    id: scope.id,
    object: 'chat.completion.chunk',
    created: scope.created,
    model: MODEL_ID,
    choices: part.usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: part.finish ?? null }],
    ...(part.usage ? { usage: part.usage } : {}),
    conversation_id: scope.conversationId,
  } satisfies ChatCompletionChunk & { conversation_id: string };
}

export function modelBody(): Model {
  return { id: MODEL_ID, object: 'model', created: 0, owned_by: 'airlock' };
}

const TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  410: 'invalid_request_error',
  412: 'invalid_request_error',
  413: 'invalid_request_error',
  429: 'rate_limit_error',
};

/** The field a validation error is about (OpenAI's `param`), when it names one. */
function paramOf(error: AirlockError): string | null {
  const first = Array.isArray(error.details) ? (error.details[0] as { path?: unknown } | undefined) : undefined;
  return typeof first?.path === 'string' && first.path ? first.path : null;
}

/** Pure: OpenAI's error envelope around a taxonomy error (its HTTP status is the taxonomy's). */
export function errorBody(error: AirlockError) {
  const detail = Array.isArray(error.details) ? (error.details[0] as { message?: unknown } | undefined)?.message : undefined;
  const message = typeof detail === 'string' && detail ? `${error.message} ${paramOf(error) ?? 'body'}: ${detail}` : error.message;
  return { error: { message, type: TYPES[error.status] ?? (error.status >= 500 ? 'server_error' : 'invalid_request_error'), param: paramOf(error), code: error.code } };
}
