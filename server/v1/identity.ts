/**
 * Who calls `/api/agent/v1/*` (issue 11): a user with their own token (`Authorization: Bearer
 * <user JWT>`), or a service (`Authorization: Bearer <service JWT>`, aud airlock:service, from
 * `POST /api/auth/service-token`) acting on behalf of the user whose token is in `X-User-JWT`.
 * Either way the caller acts as that user, within the user's tenant: `user_key` is
 * `tenant:username` (seed 000), another tenant's runs and approvals are NOT_FOUND, and a `user_key`
 * in a body that is not the caller's is FORBIDDEN.
 *
 * Import `v1Authenticate` as an onRequest hook and `v1Caller(request)` in handlers.
 * @module
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, isAuthError, roleAllows, type Permission, type UserRole, type VerifiedService, type VerifiedUser } from '../auth/index.ts';
import type { Queryable } from '../db/index.ts';
import { AirlockError } from '../errors.ts';

export interface V1Caller {
  userId: string;
  username: string;
  role: UserRole;
  tenant: string;
  /** `tenant:username`: the seed's user_key. */
  userKey: string;
  /** The user's own token: the runs this caller starts carry it to the tools (X-User-JWT). */
  userToken: string;
  /** How the caller proved who it is (seed 000: service-token calls record auth_provider=service_token). */
  authProvider: 'user_token' | 'service_token';
  /** The service client that called on the user's behalf (authProvider service_token). */
  serviceClientId?: string;
}

export interface V1IdentityDeps {
  pool: Queryable;
  verifyUser(token: string): Promise<VerifiedUser>;
  verifyService(token: string): Promise<VerifiedService>;
}

/** Pure: the seed's user key of a user. */
export const userKeyOf = (tenant: string, username: string): string => `${tenant}:${username}`;

const callers = new WeakMap<FastifyRequest, V1Caller>();

export function unauthorized(message: string, cause?: unknown): AirlockError {
  // "Could not check" (the database is down) is not "not authenticated": rethrow it for a 503.
  if (cause !== undefined && !isAuthError(cause)) throw cause;
  return new AirlockError('UNAUTHORIZED', message, { cause });
}

/** The token of X-User-JWT (with or without a `Bearer ` prefix), or null. */
export function onBehalfToken(request: FastifyRequest): string | null {
  const header = request.headers['x-user-jwt'];
  if (typeof header !== 'string' || !header.trim()) return null;
  return bearerToken(header) ?? header.trim();
}

async function tenantOf(pool: Queryable, userId: string): Promise<string> {
  const { rows } = await pool.query<{ tenant: string }>('SELECT tenant FROM users WHERE id = $1', [userId]);
  if (!rows[0]) throw new AirlockError('UNAUTHORIZED', 'The user does not exist.');
  return rows[0].tenant;
}

/** Verifies the request's credentials and returns the caller; throws UNAUTHORIZED (401). */
export async function authenticateV1(deps: V1IdentityDeps, request: FastifyRequest): Promise<V1Caller> {
  const bearer = bearerToken(request.headers.authorization);
  if (!bearer) throw unauthorized('A user token, or the service token with X-User-JWT, is required (Authorization: Bearer).');
  const onBehalf = onBehalfToken(request);
  let service: VerifiedService | undefined;
  let userToken = bearer;
  if (onBehalf) {
    // X-User-JWT means "a service calls for this user": the bearer must then be the service token,
    // so a user cannot borrow another user's token by putting it in the header.
    try {
      service = await deps.verifyService(bearer);
    } catch (error) {
      throw unauthorized('With X-User-JWT, Authorization must carry a valid service token.', error);
    }
    userToken = onBehalf;
  }
  let user: VerifiedUser;
  try {
    user = await deps.verifyUser(userToken);
  } catch (error) {
    throw unauthorized(onBehalf ? 'X-User-JWT must carry a valid user token.' : 'A valid user token is required (or the service token with X-User-JWT).', error);
  }
  const tenant = await tenantOf(deps.pool, user.userId);
  return {
    userId: user.userId,
    username: user.username,
    role: user.role,
    tenant,
    userKey: userKeyOf(tenant, user.username),
    userToken,
    authProvider: service ? 'service_token' : 'user_token',
    ...(service ? { serviceClientId: service.clientId } : {}),
  };
}

/** onRequest hook for every /v1 route that needs a caller. */
export function v1Authenticate(deps: V1IdentityDeps) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    reply.header('www-authenticate', 'Bearer');
    callers.set(request, await authenticateV1(deps, request));
    reply.removeHeader('www-authenticate');
  };
}

/** The caller of this request; only behind v1Authenticate. */
export function v1Caller(request: FastifyRequest): V1Caller {
  const caller = callers.get(request);
  if (!caller) throw new AirlockError('UNAUTHORIZED');
  return caller;
}

/** A body's `user_key` must be the caller's own (or the on-behalf user's): FORBIDDEN otherwise. */
export function assertUserKey(caller: V1Caller, userKey: string | null | undefined): void {
  if (userKey === undefined || userKey === null || userKey === caller.userKey) return;
  throw new AirlockError('FORBIDDEN', `user_key must be the caller's own (${caller.userKey}).`, { details: { user_key: userKey } });
}

/**
 * Pure: may this caller see a record of `owner` (its tenant and user id)? Another tenant never;
 * within the tenant, the owner, or a role with `permission` (admins see the tenant's work).
 */
export function canSee(caller: Pick<V1Caller, 'tenant' | 'userId' | 'role'>, owner: { tenant: string; userId: string }, permission: Permission = 'approvals:decide'): boolean {
  if (owner.tenant !== caller.tenant) return false;
  return owner.userId === caller.userId || roleAllows({ role: caller.role, permission });
}

/** Pure: may this caller decide an approval requested by `requestedBy` in `tenant`? */
export function canDecide(caller: Pick<V1Caller, 'tenant' | 'userId' | 'role'>, approval: { tenant: string; requestedBy: string }): boolean {
  return canSee(caller, { tenant: approval.tenant, userId: approval.requestedBy }, 'approvals:decide');
}
