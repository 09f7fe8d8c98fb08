/**
 * Error bodies of the headless API: the seed's `{"type":"error","error":{"code","message"}}`, with
 * the taxonomy's codes and statuses (errors.ts). The same mapping as every other route
 * (error-handler.ts), only the envelope differs.
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { RETRY_AFTER_S, toAirlockError } from '../error-handler.ts';
import { AirlockError, toErrorBody } from '../errors.ts';
import { retryAfterOf } from '../http/index.ts';

export interface V1ErrorBody {
  type: 'error';
  error: { code: string; message: string; details?: unknown };
}

/** Pure: the seed's error envelope around a taxonomy error. */
export function v1ErrorBody(error: AirlockError): V1ErrorBody {
  return { type: 'error', ...toErrorBody(error) };
}

/** Sets an error envelope (`body`) for the routes of this (encapsulated) plugin scope: the taxonomy's status, Retry-After when it says to wait. */
export function useErrorBodies(app: FastifyInstance, body: (error: AirlockError) => unknown): void {
  app.setErrorHandler((error, request, reply) => {
    const airlockError = toAirlockError(error, request.id);
    if (airlockError.code === 'INTERNAL') request.log.error({ err: error, correlationId: request.id }, 'unexpected error');
    if (airlockError.code === 'SERVICE_UNAVAILABLE') reply.header('retry-after', String(RETRY_AFTER_S));
    const wait = retryAfterOf(airlockError);
    if (wait !== null) reply.header('retry-after', String(wait));
    reply.status(airlockError.status).send(body(airlockError));
  });
}

/** Sets the v1 error envelope for the routes of this (encapsulated) plugin scope. */
export function useV1ErrorBodies(app: FastifyInstance): void {
  useErrorBodies(app, v1ErrorBody);
}

/**
 * The error envelope and the not-found handler on the v1 plugin (one prefix has one not-found
 * handler: the other /api/agent/v1 plugins set only the envelope).
 */
export function registerV1Errors(app: FastifyInstance): void {
  useV1ErrorBodies(app);
  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(v1ErrorBody(new AirlockError('NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`)));
  });
}
