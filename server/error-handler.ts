/**
 * One error handler for every role: expected errors keep their code and message, Fastify's
 * validation and body errors become VALIDATION_ERROR / PAYLOAD_TOO_LARGE, anything else is logged
 * once with its cause and answered as INTERNAL with a correlation id (never a stack trace). A
 * database that cannot be reached is SERVICE_UNAVAILABLE (503, Retry-After), never a 500 or 401.
 * @module
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { ZodError } from 'zod';
import { isDatabaseUnavailable } from './db/unavailable.ts';
import { AirlockError, isAirlockError, toErrorBody, type ErrorCode } from './errors.ts';

/** Maps any thrown value to the AirlockError a client may see. */
export function toAirlockError(error: unknown, correlationId: string): AirlockError {
  if (isAirlockError(error)) return error;
  if (isDatabaseUnavailable(error)) return new AirlockError('SERVICE_UNAVAILABLE', undefined, { cause: error });
  if (error instanceof ZodError) {
    return new AirlockError('VALIDATION_ERROR', 'The request is not valid.', {
      details: error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  const fastifyError = error as Partial<FastifyError>;
  const byFastifyCode: Record<string, ErrorCode> = {
    FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
    FST_ERR_CTP_INVALID_JSON_BODY: 'VALIDATION_ERROR',
    FST_ERR_CTP_EMPTY_JSON_BODY: 'VALIDATION_ERROR',
    FST_ERR_CTP_INVALID_MEDIA_TYPE: 'VALIDATION_ERROR',
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_ERROR',
    FST_ERR_VALIDATION: 'VALIDATION_ERROR',
  };
  const mapped = fastifyError.code ? byFastifyCode[fastifyError.code] : undefined;
  if (mapped) return new AirlockError(mapped, fastifyError.message);
  if (fastifyError.statusCode === 413) return new AirlockError('PAYLOAD_TOO_LARGE');
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new AirlockError('VALIDATION_ERROR', fastifyError.message);
  }
  return new AirlockError('INTERNAL', `Something went wrong on our side (reference ${correlationId}).`);
}

/** What a 503 tells clients to wait before retrying. */
export const RETRY_AFTER_S = 5;

export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const airlockError = toAirlockError(error, request.id);
    if (airlockError.code === 'INTERNAL') request.log.error({ err: error, correlationId: request.id }, 'unexpected error');
    if (airlockError.code === 'SERVICE_UNAVAILABLE') {
      request.log.warn({ err: error, correlationId: request.id }, 'database unavailable');
      reply.header('retry-after', String(RETRY_AFTER_S));
    }
    // A refusal that names its wait (admission, login backoff): Retry-After says it.
    const wait = (airlockError.details as { retry_after_s?: unknown } | undefined)?.retry_after_s;
    if (airlockError.code === 'RATE_LIMITED' && typeof wait === 'number' && wait > 0) reply.header('retry-after', String(Math.ceil(wait)));
    reply.status(airlockError.status).send(toErrorBody(airlockError));
  });
}
