/**
 * The v1 error envelope (errors.ts, shared with the runs API) for the control-plane routes of this
 * folder. Only the error handler: one prefix has one not-found handler, and the runs API's plugin
 * owns it.
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { RETRY_AFTER_S, toAirlockError } from '../../error-handler.ts';
import { v1ErrorBody } from './errors.ts';

/** Sets the v1 error shape for the routes of this plugin scope. */
export function useV1ErrorBodies(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const e = toAirlockError(error, request.id);
    if (e.code === 'INTERNAL') request.log.error({ err: error, correlationId: request.id }, 'unexpected error');
    if (e.code === 'SERVICE_UNAVAILABLE') reply.header('retry-after', String(RETRY_AFTER_S));
    reply.status(e.status).send(v1ErrorBody(e));
  });
}
