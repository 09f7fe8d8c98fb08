/**
 * The pluggable authenticator as an onRequest hook: every route needs an identity, else 401 in
 * Gradio's shape, except CORS preflights and the routes marked `config: { optionalAuth: true }`
 * (heartbeat, cancel, reset: the JS client sends its `token:` to none of the latter two, so they
 * decide themselves what an unauthenticated caller may do). The identity is kept per request.
 * @module
 */
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { readCookie } from './cookie-session.ts';
import { isGradioError, NotAuthenticatedError, ServiceUnavailableError } from './errors.ts';
import type { OwnerKey } from './ownership.ts';
import type { Authenticate } from './types.ts';

const identities = new WeakMap<FastifyRequest, unknown>();

/** The identity `authenticate()` gave this request (undefined on an optional-auth route without one). */
export function identityOf(request: FastifyRequest): unknown {
  return identities.get(request);
}

/** Whether this request carries an identity. */
export function isAuthenticated(request: FastifyRequest): boolean {
  return identities.has(request);
}

/** The owner key of the request's identity: null for an unbound app or an unauthenticated caller. */
export function ownerOf(request: FastifyRequest, identityKey: ((identity: any) => string) | undefined): OwnerKey {
  if (!identityKey || !identities.has(request)) return null;
  return identityKey(identities.get(request));
}

/**
 * The headers `authenticate()` sees: a `/login` cookie counts as `Authorization: Bearer <token>`
 * when the request carries no Authorization header of its own (which then wins).
 */
export function withCookieBearer(headers: FastifyRequest['headers'], sessionCookie: string | undefined): FastifyRequest['headers'] {
  if (!sessionCookie || headers.authorization) return headers;
  const token = readCookie(headers.cookie, sessionCookie);
  return token ? { ...headers, authorization: `Bearer ${token}` } : headers;
}

/**
 * Builds the hook. null means "not authenticated" (401, or an anonymous caller on optionalAuth
 * routes). A throw means authentication could not be decided (its store is down): never a 401,
 * which would make clients drop valid credentials; a thrown GradioError (e.g.
 * ServiceUnavailableError, 503 + Retry-After) is answered as it is, anything else as a 503
 * ServiceUnavailableError. optionalAuth routes (cancel by pair, heartbeat) go on as anonymous.
 */
export function createAuthHook(authenticate: Authenticate<unknown>, sessionCookie?: string): onRequestAsyncHookHandler {
  return async (request, reply) => {
    if (request.method === 'OPTIONS') return;
    const optional = Boolean((request.routeOptions.config as { optionalAuth?: boolean } | undefined)?.optionalAuth);
    let identity: unknown;
    try {
      identity = await authenticate(withCookieBearer(request.headers, sessionCookie));
    } catch (error) {
      request.log.warn({ err: error }, 'gradio authenticate() could not decide');
      if (optional) return;
      const unavailable = isGradioError(error) ? error : new ServiceUnavailableError(undefined, { cause: error });
      if (unavailable instanceof ServiceUnavailableError) reply.header('retry-after', String(unavailable.retryAfterS));
      throw unavailable;
    }
    if (identity === null || identity === undefined) {
      if (optional) return;
      throw new NotAuthenticatedError();
    }
    identities.set(request, identity);
  };
}
