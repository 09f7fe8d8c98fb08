/**
 * `POST /gradio_api/cancel`, `POST /gradio_api/reset` and `GET /gradio_api/heartbeat/{session}`.
 * All three take callers without credentials: the JS client sends its `token:` to neither cancel
 * nor reset, and the Python client's heartbeat must never get a 404 (it spins on one).
 * @module
 */
import type { FastifyInstance, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { isAuthenticated, ownerOf } from '../auth.ts';
import type { GradioContext } from '../context.ts';
import { NotAuthenticatedError } from '../errors.ts';
import { openStream, onResponseClose } from './queue.ts';

/** Events cancelled without credentials lately, so the JS client's follow-up /reset succeeds. */
const RECENT_LIMIT = 1000;

/** Registers cancel, reset and heartbeat. */
export function registerControlRoutes(app: FastifyInstance, ctx: GradioContext): void {
  const recentlyCancelled = new Set<string>();
  const optionalAuth = { config: { optionalAuth: true } } as RouteShorthandOptions;

  const cancel = async (request: FastifyRequest) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const sessionHash = typeof body.session_hash === 'string' ? body.session_hash : undefined;
    const eventId = typeof body.event_id === 'string' ? body.event_id : undefined;
    const authenticated = isAuthenticated(request);
    // Without credentials only the (session_hash, event_id) pair of a live event counts.
    if (!authenticated && (!eventId || sessionHash === undefined)) throw new NotAuthenticatedError();
    const outcome = eventId ? await ctx.queue.cancel(eventId, { owner: ownerOf(request, ctx.options.identityKey), sessionHash }) : 'unknown';
    if (!authenticated) {
      if (outcome !== 'cancelled') throw new NotAuthenticatedError();
      recentlyCancelled.add(eventId!);
      if (recentlyCancelled.size > RECENT_LIMIT) recentlyCancelled.delete(recentlyCancelled.values().next().value!);
    }
    // Gradio answers success whatever the event (refused included: nothing to learn about others'
    // events); the terminal message travels on the owner's stream.
    return { success: true };
  };
  for (const path of ['/gradio_api/cancel', '/gradio_api/cancel/']) app.post(path, optionalAuth, cancel);

  // Gradio's /reset is a no-op after /cancel; accepted for the clients that call it.
  const reset = async (request: FastifyRequest) => {
    const eventId = ((request.body ?? {}) as Record<string, unknown>).event_id;
    if (!isAuthenticated(request) && !(typeof eventId === 'string' && recentlyCancelled.delete(eventId))) throw new NotAuthenticatedError();
    return { success: true };
  };
  for (const path of ['/gradio_api/reset', '/gradio_api/reset/']) app.post(path, optionalAuth, reset);

  app.get('/gradio_api/heartbeat/:session_hash', optionalAuth, async (request, reply) => {
    const writer = openStream(reply);
    ctx.streams.attachHeartbeat(writer, onResponseClose(reply), isAuthenticated(request), ownerOf(request, ctx.options.identityKey));
  });
}
