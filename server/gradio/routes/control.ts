/**
 * `POST /gradio_api/cancel`, `POST /gradio_api/reset` and `GET /gradio_api/heartbeat/{session}`
 * (the only route without authentication).
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { GradioContext } from '../context.ts';
import { openStream, onResponseClose } from './queue.ts';

/** Registers cancel, reset and heartbeat. */
export function registerControlRoutes(app: FastifyInstance, ctx: GradioContext): void {
  const cancel = async (request: import('fastify').FastifyRequest) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (typeof body.event_id === 'string') {
      ctx.queue.cancel(body.event_id, typeof body.session_hash === 'string' ? body.session_hash : undefined);
    }
    // Gradio answers success whatever the event; the terminal message travels on the stream.
    return { success: true };
  };
  for (const path of ['/gradio_api/cancel', '/gradio_api/cancel/']) app.post(path, cancel);
  // Gradio's /reset is a no-op after /cancel; accepted for the clients that call it.
  for (const path of ['/gradio_api/reset', '/gradio_api/reset/']) app.post(path, async () => ({ success: true }));

  app.get('/gradio_api/heartbeat/:session_hash', { config: { public: true } }, async (_request, reply) => {
    const writer = openStream(reply);
    ctx.streams.attachHeartbeat(writer, onResponseClose(reply));
  });
}
