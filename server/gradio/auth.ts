/**
 * The pluggable authenticator as an onRequest hook: every route but those marked
 * `config: { public: true }` (the heartbeat) and CORS preflights needs an identity, else 401 in
 * Gradio's shape. The identity is kept per request for the routes.
 * @module
 */
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { isGradioError, NotAuthenticatedError, ServiceUnavailableError } from './errors.ts';
import type { Authenticate } from './types.ts';

const identities = new WeakMap<FastifyRequest, unknown>();

/** The identity `authenticate()` gave this request. */
export function identityOf(request: FastifyRequest): unknown {
  return identities.get(request);
}

/**
 * Builds the hook. null means "not authenticated" (401). A throw means authentication could not
 * be decided (its store is down): never a 401, which would make clients drop valid credentials;
 * a thrown GradioError (e.g. ServiceUnavailableError, 503 + Retry-After) is answered as it is,
 * anything else as a 503 ServiceUnavailableError.
 */
export function createAuthHook(authenticate: Authenticate<unknown>): onRequestAsyncHookHandler {
  return async (request, reply) => {
    if (request.method === 'OPTIONS') return;
    if ((request.routeOptions.config as { public?: boolean } | undefined)?.public) return;
    let identity: unknown;
    try {
      identity = await authenticate(request.headers);
    } catch (error) {
      request.log.warn({ err: error }, 'gradio authenticate() could not decide');
      const unavailable = isGradioError(error) ? error : new ServiceUnavailableError(undefined, { cause: error });
      if (unavailable instanceof ServiceUnavailableError) reply.header('retry-after', String(unavailable.retryAfterS));
      throw unavailable;
    }
    if (identity === null || identity === undefined) throw new NotAuthenticatedError();
    identities.set(request, identity);
  };
}
