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
import { decodeProtectedHeader } from 'jose';
import { authErrorDetails, bearerToken, isAuthError, roleAllows, TOKEN_KINDS, type Permission, type UserRole, type VerifiedService, type VerifiedUser } from '../auth/index.ts';
import { insertAudit } from '../db/audit.ts';
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
  /** How the user was named: their own token (X-User-JWT or Authorization), or the body's `user_key` (service_rules user_key_only). */
  userFrom?: 'token' | 'user_key';
}

export interface V1IdentityDeps {
  pool: Queryable;
  verifyUser(token: string): Promise<VerifiedUser>;
  verifyService(token: string): Promise<VerifiedService>;
  /** policy file `service_rules.<client_id>.user_key_only` (seed 000's PSKA call); absent: never. */
  userKeyOnly?(clientId: string): boolean;
  /** A token for a user named by user_key (user-token.ts); needed with userKeyOnly. */
  mintToken?(userId: string): Promise<string>;
}

/** Seed 000's second way to pass the service token (`X-FastReAct-Service-Token: <service JWT>`). */
export const SERVICE_TOKEN_HEADER = 'x-fastreact-service-token';

/** The token of X-FastReAct-Service-Token (with or without a `Bearer ` prefix), or null. */
export function serviceHeaderToken(request: FastifyRequest): string | null {
  const header = request.headers[SERVICE_TOKEN_HEADER];
  if (typeof header !== 'string' || !header.trim()) return null;
  return bearerToken(header) ?? header.trim();
}

/** Pure: does the token's header say it is a service token (verification checks it again)? */
export function looksLikeServiceToken(token: string): boolean {
  try {
    return decodeProtectedHeader(token).typ === TOKEN_KINDS.service.typ;
  } catch {
    return false;
  }
}

/** Pure: the seed's user key of a user. */
export const userKeyOf = (tenant: string, username: string): string => `${tenant}:${username}`;

const callers = new WeakMap<FastifyRequest, V1Caller>();

export function unauthorized(message: string, cause?: unknown): AirlockError {
  // "Could not check" (the database is down) is not "not authenticated": rethrow it for a 503.
  if (cause !== undefined && !isAuthError(cause)) throw cause;
  const disabled = authErrorDetails(cause);
  if (disabled) return new AirlockError('UNAUTHORIZED', 'This account has been disabled.', { details: disabled, cause });
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

/**
 * A service authenticated without a user token whose policy allows `user_key` alone: the user is
 * named by the body (resolved in the preHandler, after the body is parsed).
 */
export interface PendingServiceCaller {
  pending: 'user_key';
  service: VerifiedService;
}

async function verifiedService(deps: V1IdentityDeps, token: string, message: string): Promise<VerifiedService> {
  try {
    return await deps.verifyService(token);
  } catch (error) {
    throw unauthorized(message, error);
  }
}

/**
 * Verifies the request's credentials and returns the caller; throws UNAUTHORIZED (401). The
 * service token comes in `Authorization: Bearer` or `X-FastReAct-Service-Token` (seed 000); the
 * user in X-User-JWT, or (service_rules user_key_only) in the body's user_key: then a pending caller.
 */
export async function authenticateV1(deps: V1IdentityDeps, request: FastifyRequest): Promise<V1Caller | PendingServiceCaller> {
  const bearer = bearerToken(request.headers.authorization);
  const headerService = serviceHeaderToken(request);
  const onBehalf = onBehalfToken(request);
  if (!bearer && !headerService) throw unauthorized('A user token, or the service token (Authorization: Bearer or X-FastReAct-Service-Token) with X-User-JWT, is required.');
  let service: VerifiedService | undefined;
  let userToken: string | null = bearer;
  if (headerService) {
    service = await verifiedService(deps, headerService, 'X-FastReAct-Service-Token must carry a valid service token.');
    // The user: X-User-JWT, else a user token in Authorization (never a second service token).
    userToken = onBehalf ?? (bearer && !looksLikeServiceToken(bearer) ? bearer : null);
  } else if (onBehalf) {
    // X-User-JWT means "a service calls for this user": the bearer must then be the service token,
    // so a user cannot borrow another user's token by putting it in the header.
    service = await verifiedService(deps, bearer!, 'With X-User-JWT, Authorization must carry a valid service token.');
    userToken = onBehalf;
  } else if (looksLikeServiceToken(bearer!)) {
    service = await verifiedService(deps, bearer!, 'The service token is not valid.');
    userToken = null;
  }
  if (service && !userToken) {
    if (deps.userKeyOnly?.(service.clientId)) return { pending: 'user_key', service };
    throw unauthorized(`The service token acts for a user: pass the user's token in X-User-JWT (or allow service_rules.${service.clientId}.user_key_only in the policy file to name the user by user_key).`);
  }
  let user: VerifiedUser;
  try {
    user = await deps.verifyUser(userToken!);
  } catch (error) {
    throw unauthorized(service ? 'X-User-JWT must carry a valid user token.' : 'A valid user token is required (or the service token with X-User-JWT).', error);
  }
  const tenant = await tenantOf(deps.pool, user.userId);
  return {
    userId: user.userId,
    username: user.username,
    role: user.role,
    tenant,
    userKey: userKeyOf(tenant, user.username),
    userToken: userToken!,
    authProvider: service ? 'service_token' : 'user_token',
    userFrom: 'token',
    ...(service ? { serviceClientId: service.clientId } : {}),
  };
}

/**
 * The caller a user_key-only service acts for: the body's `user_key` (tenant:username) names an
 * existing user, who then acts with a token minted now. Audited (operation `v1.user_key_only`).
 */
export async function resolveUserKeyCaller(deps: V1IdentityDeps, request: FastifyRequest, service: VerifiedService): Promise<V1Caller> {
  // The body's user_key (a POST), else ?user_key= (a GET of the same service).
  const body = request.body as { user_key?: unknown } | undefined;
  const query = request.query as { user_key?: unknown } | undefined;
  const key = (body && typeof body === 'object' ? body.user_key : undefined) ?? query?.user_key;
  const path = request.url.split('?')[0];
  const audit = (entry: { userId: string | null; username: string | null; role: string | null; outcome: 'success' | 'unauthorized'; status: number; code: string | null }) =>
    insertAudit(deps.pool, {
      serviceActor: service.clientId,
      userId: entry.userId,
      username: entry.username,
      userRole: entry.role,
      operation: 'v1.user_key_only',
      method: request.method,
      path,
      arguments: { user_key: typeof key === 'string' ? key.slice(0, 200) : null, auth_provider: 'service_token', user_from: 'user_key' },
      outcome: entry.outcome,
      statusCode: entry.status,
      errorCode: entry.code,
      toolCallId: null,
      conversationId: null,
      durationMs: null,
    });
  const match = typeof key === 'string' ? /^([^:]+):([^:]+)$/.exec(key) : null;
  if (!match || !deps.mintToken) {
    await audit({ userId: null, username: null, role: null, outcome: 'unauthorized', status: 401, code: 'UNAUTHORIZED' });
    throw new AirlockError('UNAUTHORIZED', 'This service names the user by user_key (tenant:username) in the body, or by X-User-JWT.');
  }
  const { rows } = await deps.pool.query<{ id: string; username: string; role: UserRole; tenant: string }>('SELECT id, username, role, tenant FROM users WHERE tenant = $1 AND username = $2', [match[1], match[2]]);
  const user = rows[0];
  if (!user) {
    await audit({ userId: null, username: null, role: null, outcome: 'unauthorized', status: 401, code: 'UNAUTHORIZED' });
    throw new AirlockError('UNAUTHORIZED', `No user has user_key ${key}.`);
  }
  const userToken = await deps.mintToken(user.id);
  await audit({ userId: user.id, username: user.username, role: user.role, outcome: 'success', status: 200, code: null });
  return {
    userId: user.id,
    username: user.username,
    role: user.role,
    tenant: user.tenant,
    userKey: userKeyOf(user.tenant, user.username),
    userToken,
    authProvider: 'service_token',
    serviceClientId: service.clientId,
    userFrom: 'user_key',
  };
}

const pendings = new WeakMap<FastifyRequest, VerifiedService>();

/** onRequest hook for every /v1 route that needs a caller. */
export function v1Authenticate(deps: V1IdentityDeps) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    reply.header('www-authenticate', 'Bearer');
    const caller = await authenticateV1(deps, request);
    if ('pending' in caller) pendings.set(request, caller.service);
    else callers.set(request, caller);
    reply.removeHeader('www-authenticate');
  };
}

/** preHandler hook after v1Authenticate: a user_key-only service's user, from the parsed body. */
export function v1ResolveUserKey(deps: V1IdentityDeps) {
  return async (request: FastifyRequest): Promise<void> => {
    const service = pendings.get(request);
    if (!service || callers.has(request)) return;
    callers.set(request, await resolveUserKeyCaller(deps, request, service));
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

