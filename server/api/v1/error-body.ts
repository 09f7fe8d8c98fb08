/**
 * Error bodies of the `/api/agent/v1` routes (seed 000): `{"type":"error","error":{code,message}}`,
 * the taxonomy's codes and statuses (the app's error handler decides both; this only adds `type`).
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { toAirlockError, RETRY_AFTER_S } from '../../error-handler.ts';
import { toErrorBody } from '../../errors.ts';

/** Sets the v1 error shape for the routes of this plugin scope. */
export function useV1ErrorBodies(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const e = toAirlockError(error, request.id);
    if (e.code === 'INTERNAL') request.log.error({ err: error, correlationId: request.id }, 'unexpected error');
    if (e.code === 'SERVICE_UNAVAILABLE') reply.header('retry-after', String(RETRY_AFTER_S));
    reply.status(e.status).send({ type: 'error', ...toErrorBody(e) });
  });
}
