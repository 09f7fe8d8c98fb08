/**
 * Who calls a control-plane route of `/api/agent/v1` (policy, metrics, readiness): a user token,
 * or the service token (aud airlock:service) with, optionally, the user it acts for in
 * `X-User-JWT` (identity.ts requires that user: the runs API always acts as one). The token's `typ` header picks the verifier (each checks its own audience and
 * typ again, so a forged header only makes verification fail). Database failures are rethrown,
 * never reported as 401.
 * @module
 */
import type { FastifyRequest } from 'fastify';
import { decodeProtectedHeader } from 'jose';
import { bearerToken, TOKEN_KINDS, type VerifiedService, type VerifiedUser } from '../auth/index.ts';
import { onBehalfToken, serviceHeaderToken, unauthorized } from './identity.ts';

export interface Verifiers {
  verifyUser(token: string): Promise<VerifiedUser>;
  verifyService(token: string): Promise<VerifiedService>;
}

/** The service (when the service token was used) and the user (own token, or X-User-JWT). */
export interface Caller {
  service: VerifiedService | null;
  user: VerifiedUser | null;
}

async function verified<T>(verify: (t: string) => Promise<T>, token: string, message: string): Promise<T> {
  try {
    return await verify(token);
  } catch (error) {
    throw unauthorized(message, error);
  }
}

function typOf(token: string): string | undefined {
  try {
    return decodeProtectedHeader(token).typ;
  } catch {
    return undefined;
  }
}

/** Authenticates the caller; `serviceOnly` refuses user tokens (metrics, readiness). */
export async function authenticateCaller(request: FastifyRequest, verifiers: Verifiers, options: { serviceOnly?: boolean } = {}): Promise<Caller> {
  // Seed 000: X-FastReAct-Service-Token is the service token's second header.
  const token = serviceHeaderToken(request) ?? bearerToken(request.headers.authorization);
  const wanted = options.serviceOnly ? 'The service token is required (Authorization: Bearer or X-FastReAct-Service-Token).' : 'A user token or the service token is required (Authorization: Bearer or X-FastReAct-Service-Token).';
  if (!token) throw unauthorized(wanted);
  if (typOf(token) === TOKEN_KINDS.service.typ) {
    const service = await verified(verifiers.verifyService, token, 'The service token is not valid.');
    const userToken = onBehalfToken(request);
    const user = userToken ? await verified(verifiers.verifyUser, userToken, 'The X-User-JWT token is not valid.') : null;
    return { service, user };
  }
  if (options.serviceOnly) throw unauthorized(wanted);
  return { service: null, user: await verified(verifiers.verifyUser, token, 'The user token is not valid.') };
}
