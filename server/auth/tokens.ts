/**
 * Issuing JWTs. User tokens and service tokens share the signing key but differ in audience and
 * `typ`, so neither can ever pass for the other.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { SIGNING_ALG, type KeyStore } from './keys.ts';
import type { UserRole } from './rbac.ts';

/** The two kinds of token: audience and `typ` header of each. */
export const TOKEN_KINDS = {
  user: { audience: 'airlock:user', typ: 'user+jwt' },
  service: { audience: 'airlock:service', typ: 'service+jwt' },
} as const;
export type TokenKind = keyof typeof TOKEN_KINDS;

export interface IssuedToken {
  token: string;
  jti: string;
  expiresIn: number;
  /** Seconds since the epoch. */
  exp: number;
}

async function sign(
  keys: KeyStore,
  input: { kind: TokenKind; issuer: string; subject: string; ttlS: number; claims: Record<string, unknown> },
): Promise<IssuedToken> {
  const { kid, key } = await keys.signingKey();
  const jti = randomUUID();
  const iat = Math.floor(Date.now() / 1000);
  const exp = iat + input.ttlS;
  const token = await new SignJWT(input.claims)
    .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: TOKEN_KINDS[input.kind].typ })
    .setIssuer(input.issuer)
    .setAudience(TOKEN_KINDS[input.kind].audience)
    .setSubject(input.subject)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(jti)
    .sign(key);
  return { token, jti, expiresIn: input.ttlS, exp };
}

/**
 * A user access token: sub = user id, plus username and role; `sid` names the browser session
 * (refresh family) it was issued for, so that signing out ends every tab's token at once.
 */
export function signUserToken(
  keys: KeyStore,
  input: { issuer: string; ttlS: number; user: { id: string; username: string; role: UserRole }; sessionId?: string },
): Promise<IssuedToken> {
  return sign(keys, {
    kind: 'user',
    issuer: input.issuer,
    subject: input.user.id,
    ttlS: input.ttlS,
    claims: { username: input.user.username, role: input.user.role, ...(input.sessionId ? { sid: input.sessionId } : {}) },
  });
}

/** A short-lived service token for an authenticated client (the agent gateway). */
export function signServiceToken(keys: KeyStore, input: { issuer: string; ttlS: number; clientId: string }): Promise<IssuedToken> {
  return sign(keys, { kind: 'service', issuer: input.issuer, subject: input.clientId, ttlS: input.ttlS, claims: {} });
}
