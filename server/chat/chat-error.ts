/**
 * What a /chat failure looks like to clients: expected errors keep their code; a database that
 * cannot be reached is SERVICE_UNAVAILABLE (retryable, the session stays valid); anything else
 * is INTERNAL with a reference, logged once. Raw messages (SQL, socket addresses) never leak.
 * @module
 */
import type { FastifyBaseLogger } from 'fastify';
import { isDatabaseUnavailable } from '../db/index.ts';
import { AirlockError, isAirlockError } from '../errors.ts';
import { EndpointError, type EndpointDefinition, type EndpointRequest } from '../gradio/index.ts';

/** Maps a thrown value to the taxonomy; `reference` correlates the log line (the event id). */
export function toChatError(error: unknown, reference: string): AirlockError {
  if (isAirlockError(error)) return error;
  if (isDatabaseUnavailable(error)) return new AirlockError('SERVICE_UNAVAILABLE', undefined, { cause: error });
  return new AirlockError('INTERNAL', `Something went wrong on our side (reference ${reference}).`, { cause: error });
}

/** Logs what needs a look: INTERNAL as an error with its cause, an outage as a warning. */
export function logChatError(log: FastifyBaseLogger, error: AirlockError, reference: string): void {
  if (error.code === 'INTERNAL') log.error({ err: error.cause ?? error, correlationId: reference }, '/chat failed');
  else if (error.code === 'SERVICE_UNAVAILABLE') log.warn({ err: error.cause, correlationId: reference }, '/chat: database unavailable');
}

type Handler<I> = EndpointDefinition<I>['handler'];

/**
 * Wraps a streaming handler so that a failure it did not turn into an `error` message itself
 * (one before its stream started, e.g. the conversation lookup with the database down) still
 * ends as an error completion titled with the taxonomy code, which clients read as the code.
 */
export function guardChatErrors<I>(handler: Handler<I>, log: FastifyBaseLogger): Handler<I> {
  return async function* guarded(request: EndpointRequest<I>) {
    try {
      const result = handler(request);
      if (Symbol.asyncIterator in Object(result)) yield* result as AsyncIterable<unknown[]>;
      else yield await (result as Promise<unknown[]>);
    } catch (error) {
      if (request.signal.aborted) throw error;
      const airlockError = toChatError(error, request.eventId);
      logChatError(log, airlockError, request.eventId);
      throw new EndpointError(airlockError.message, { title: airlockError.code, cause: error });
    }
  };
}
