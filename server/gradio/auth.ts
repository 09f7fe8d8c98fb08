/**
 * The pluggable authenticator as an onRequest hook: every route but those marked
 * `config: { public: true }` (the heartbeat) and CORS preflights needs an identity, else 401 in
 * Gradio's shape. The identity is kept per request for the routes.
 * @module
 */
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { NotAuthenticatedError } from './errors.ts';
import type { Authenticate } from './types.ts';

const identities = new WeakMap<FastifyRequest, unknown>();

/** The identity `authenticate()` gave this request. */
export function identityOf(request: FastifyRequest): unknown {
  return identities.get(request);
}

/** Builds the hook. An authenticator that throws counts as "not authenticated". */
export function createAuthHook(authenticate: Authenticate<unknown>): onRequestAsyncHookHandler {
  return async (request) => {
    if (request.method === 'OPTIONS') return;
    if ((request.routeOptions.config as { public?: boolean } | undefined)?.public) return;
    let identity: unknown = null;
    try {
      identity = await authenticate(request.headers);
    } catch (error) {
      request.log.debug({ err: error }, 'gradio authenticate() threw');
      identity = null;
    }
    if (identity === null || identity === undefined) throw new NotAuthenticatedError();
    identities.set(request, identity);
  };
}
