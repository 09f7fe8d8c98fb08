/**
 * Who is calling: the user (Bearer user JWT) on UI routes; the service (Bearer service JWT) AND the
 * user (X-User-JWT) on tool routes. Verified identities are kept per request in WeakMaps (no
 * request decoration, so nothing collides with other roles' plugins). AuthError -> UNAUTHORIZED.
 * @module
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authErrorDetails, bearerToken, isAuthError, roleAllows, type Permission, type VerifiedService, type VerifiedUser } from '../auth/index.ts';
import { AirlockError } from '../errors.ts';
import type { ApiContext } from './context.ts';

const users = new WeakMap<FastifyRequest, VerifiedUser>();
const services = new WeakMap<FastifyRequest, VerifiedService>();

function unauthorized(which: 'user' | 'service', error?: unknown): AirlockError {
  const revoked = isAuthError(error) && error.code === 'TOKEN_REVOKED';
  const disabled = authErrorDetails(error);
  const message =
    which === 'service'
      ? 'A valid service token is required (Authorization: Bearer).'
      : revoked
        ? 'This session has been logged out.'
        : disabled
          ? 'This account has been disabled.'
          : 'A valid user token is required.';
  if (error !== undefined && !isAuthError(error)) throw error; // a database failure is not a 401
  return new AirlockError('UNAUTHORIZED', message, { details: { token: which, ...disabled }, cause: error });
}

async function verifyOrThrow<T>(which: 'user' | 'service', token: string | null, verify: (t: string) => Promise<T>): Promise<T> {
  if (!token) throw unauthorized(which);
  try {
    return await verify(token);
  } catch (error) {
    throw unauthorized(which, error);
  }
}

/** onRequest hook for UI routes: the user token in `Authorization: Bearer`. */
export function requireUser(ctx: ApiContext) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    reply.header('www-authenticate', 'Bearer');
    users.set(request, await verifyOrThrow('user', bearerToken(request.headers.authorization), ctx.verifyUser));
    reply.removeHeader('www-authenticate');
  };
}

/** onRequest hook for tool routes: the service token first (the caller is the agent), then the user's. */
export function requireServiceAndUser(ctx: ApiContext) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    reply.header('www-authenticate', 'Bearer');
    services.set(request, await verifyOrThrow('service', bearerToken(request.headers.authorization), ctx.verifyService));
    const userHeader = request.headers['x-user-jwt'];
    const userToken = typeof userHeader === 'string' ? (bearerToken(userHeader) ?? userHeader.trim()) : null;
    users.set(request, await verifyOrThrow('user', userToken || null, ctx.verifyUser));
    reply.removeHeader('www-authenticate');
  };
}

/** The verified user of this request; only call behind requireUser / requireServiceAndUser. */
export function requestUser(request: FastifyRequest): VerifiedUser {
  const user = users.get(request);
  if (!user) throw new AirlockError('UNAUTHORIZED');
  return user;
}

/** The verified user, or undefined when verification failed or did not run. */
export function maybeRequestUser(request: FastifyRequest): VerifiedUser | undefined {
  return users.get(request);
}

export function maybeRequestService(request: FastifyRequest): VerifiedService | undefined {
  return services.get(request);
}

/** Throws FORBIDDEN naming the permission when the user's role lacks it. */
export function assertPermission(user: VerifiedUser, permission: Permission): void {
  if (!roleAllows({ role: user.role, permission })) {
    throw new AirlockError('FORBIDDEN', `Your role (${user.role}) does not allow ${permission}.`, { details: { permission } });
  }
}
