/**
 * What a /chat failure looks like to clients: expected errors keep their code; a database that
 * cannot be reached is SERVICE_UNAVAILABLE (retryable, the session stays valid); anything else
 * is INTERNAL with a reference, logged once. Raw messages (SQL, socket addresses) never leak.
 * @module
 */
import type { FastifyBaseLogger } from 'fastify';
import { AirlockError, ERROR_CODES, isAirlockError, type ErrorCode } from '../errors.ts';
import { toTurnError } from '../engine/index.ts';
import { EndpointError, type EndpointDefinition, type EndpointRequest } from '../gradio/index.ts';

/** Logs what needs a look: INTERNAL as an error with its cause, an outage as a warning. */
export function logChatError(log: FastifyBaseLogger, error: AirlockError, reference: string): void {
  if (error.code === 'INTERNAL') log.error({ err: error.cause ?? error, correlationId: reference }, '/chat failed');
  else if (error.code === 'SERVICE_UNAVAILABLE') log.warn({ err: error.cause, correlationId: reference }, '/chat: database unavailable');
}

type Handler<I> = EndpointDefinition<I>['handler'];

/**
 * The `error` metadata of a yielded ChatMessage when it says the turn failed. A step's error (one
 * naming its `tool_call_id`: a refused tool) is not: the turn went on, and it completes.
 */
function errorOf(value: unknown[]): { code: string; detail: string } | null {
  const m = (value?.[0] as { metadata?: { type?: unknown; code?: unknown; detail?: unknown; tool_call_id?: unknown } } | undefined)?.metadata;
  if (m?.type !== 'error' || typeof m.code !== 'string' || m.tool_call_id !== undefined) return null;
  return { code: m.code, detail: String(m.detail ?? '') };
}

/**
 * Wraps a streaming handler so that every failure of the turn (not a refused step: issue 24 item 2)
 * ends the event as an error completion titled
 * with the taxonomy code (Python's predict() raises, JS sees status `error`): a failure it did not
 * turn into an `error` message itself (one before its stream started, e.g. the conversation
 * lookup with the database down), and one it did, after that error ChatMessage has streamed (our
 * UI reads the message; the completion's message is `CODE: detail`).
 */
export function guardChatErrors<I>(handler: Handler<I>, log: FastifyBaseLogger): Handler<I> {
  return async function* guarded(request: EndpointRequest<I>) {
    let failure: { code: string; detail: string } | null = null;
    try {
      const result = handler(request);
      if (Symbol.asyncIterator in Object(result)) {
        for await (const value of result as AsyncIterable<unknown[]>) {
          failure = errorOf(value) ?? failure;
          yield value;
        }
      } else yield await (result as Promise<unknown[]>);
    } catch (error) {
      if (request.signal.aborted) throw error;
      const airlockError = toTurnError(error, request.eventId);
      logChatError(log, airlockError, request.eventId);
      throw new EndpointError(airlockError.message, { title: airlockError.code, cause: error, status: airlockError.status });
    }
    if (failure && !request.signal.aborted) {
      // /run answers with the code's HTTP status (a VALIDATION_ERROR is the caller's 400, not a 500).
      const status = ERROR_CODES[failure.code as ErrorCode]?.status;
      throw new EndpointError(`${failure.code}: ${failure.detail}`, { title: failure.code, status });
    }
  };
}
