/**
 * Verifying JWTs: ES256 only (so `alg: none` and HS256-with-the-public-key fail), the key chosen
 * by `kid` from our store, then issuer, audience (exactly ours: a token that names any other, such as
 * an MCP server's `mcp:<name>`, is refused), `typ`, expiry and not-before with a small clock
 * skew, an `iat` that is neither in the future nor older than the token kind's lifetime, and a
 * lifetime (`exp - iat`) no longer than the configured one. User tokens then speak only for a
 * user that exists now, with the role it has now (not the role it had at login), and who is not
 * disabled (USER_DISABLED).
 * Every failure is an AuthError TOKEN_INVALID (or TOKEN_REVOKED for a logged-out user token).
 * Anything else thrown (the database is down) is rethrown as is: "could not check" is not
 * "not authenticated", and callers answer it with 503, never 401.
 * @module
 */
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { Config } from '../config.ts';
import type { AuthPool } from './db.ts';
import { AuthError } from './errors.ts';
import { keyStoreFor, SIGNING_ALG, type KeyStore } from './keys.ts';
import { isUserRole, type UserRole } from './rbac.ts';
import { loadTokenSubject } from './token-subject.ts';
import { TOKEN_KINDS, type TokenKind } from './tokens.ts';
import { createVerifiedCache } from './verified-cache.ts';

const KID = /^[A-Za-z0-9_-]{1,128}$/;

/** Seconds of clock difference tolerated between issuer and verifier. */
export const CLOCK_SKEW_S = 30;

export interface VerifiedUser {
  userId: string;
  username: string;
  role: UserRole;
  jti: string;
  /** Seconds since the epoch. */
  exp: number;
  /** The browser session (refresh family) a cookie-session token belongs to. */
  sessionId?: string;
}

export interface VerifiedService {
  clientId: string;
  jti: string;
  exp: number;
}

/** Verifies signature and claims of one token kind; returns the payload. */
export async function verifyToken(
  keys: KeyStore,
  token: string,
  options: { kind: TokenKind; issuer: string; maxAgeS: number },
): Promise<JWTPayload & { sub: string; jti: string; exp: number }> {
  const kind = TOKEN_KINDS[options.kind];
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        // Only a well-formed kid reaches the database (ours are base64url JWK thumbprints): junk
        // such as a NUL byte must be "invalid", not a database error.
        const key = typeof header.kid === 'string' && KID.test(header.kid) ? await keys.verificationKey(header.kid) : null;
        if (!key) throw new AuthError('TOKEN_INVALID', 'Unknown signing key.');
        return key;
      },
      {
        algorithms: [SIGNING_ALG],
        issuer: options.issuer,
        audience: kind.audience,
        typ: kind.typ,
        clockTolerance: CLOCK_SKEW_S,
        maxTokenAge: options.maxAgeS + CLOCK_SKEW_S,
        requiredClaims: ['sub', 'jti', 'exp', 'iat'],
      },
    );
    if (typeof payload.sub !== 'string' || typeof payload.jti !== 'string' || typeof payload.exp !== 'number' || typeof payload.iat !== 'number') {
      throw new AuthError('TOKEN_INVALID', 'Malformed token claims.');
    }
    // Our audience and nobody else's: jose accepts a list that merely includes it, but a token that
    // also names another audience (an MCP server's, `mcp:<name>`) was made to leave Airlock.
    if (payload.aud !== kind.audience) throw new AuthError('TOKEN_INVALID', 'The token is for another audience.');
    // A validly signed token must not outlive the configured lifetime (a leaked signing key or a
    // lowered TTL must not leave month-long tokens working).
    if (payload.exp - payload.iat > options.maxAgeS) throw new AuthError('TOKEN_INVALID', 'The token lives longer than allowed.');
    return payload as JWTPayload & { sub: string; jti: string; exp: number };
  } catch (error) {
    if (error instanceof AuthError) throw error;
    // Only jose's verdicts mean "invalid"; a failed key lookup (database down) is not one.
    if (!(error instanceof joseErrors.JOSEError)) throw error;
    throw new AuthError('TOKEN_INVALID', 'The token is not valid.', { cause: error });
  }
}

/**
 * The user-token verifier the api and the gateway (/chat identity) use. Throws AuthError on
 * anything invalid, including a revoked jti and a user that no longer exists; the role returned
 * is the user's current one.
 * @example const verifyUser = createUserTokenVerifier({ pool, config }); const user = await verifyUser(token);
 */
export function createUserTokenVerifier({ pool, config }: { pool: AuthPool; config: Pick<Config, 'jwt'> }) {
  const keys = keyStoreFor(pool);
  const verified = createVerifiedCache<VerifiedUser>();
  return async (token: string): Promise<VerifiedUser> => {
    let user = verified.get(token);
    if (!user) {
      const payload = await verifyToken(keys, token, { kind: 'user', issuer: config.jwt.issuer, maxAgeS: config.jwt.userTokenTtlS });
      if (!isUserRole(payload.role) || typeof payload.username !== 'string') {
        throw new AuthError('TOKEN_INVALID', 'Malformed token claims.');
      }
      const sessionId = typeof payload.sid === 'string' ? payload.sid : undefined;
      user = { userId: payload.sub, username: payload.username, role: payload.role, jti: payload.jti, exp: payload.exp, sessionId };
      verified.set(token, user, user.exp);
    }
    // Never cached: a logout, demotion or deletion must take effect on the next request, on every replica.
    const subject = await loadTokenSubject(pool, { userId: user.userId, jti: user.jti, sessionId: user.sessionId });
    if (subject.revoked) throw new AuthError('TOKEN_REVOKED', 'The token was revoked.');
    if (!subject.user) throw new AuthError('TOKEN_INVALID', 'The user does not exist.');
    if (subject.user.disabled) throw new AuthError('USER_DISABLED', 'This account has been disabled.');
    return { ...user, username: subject.user.username, role: subject.user.role };
  };
}

/** The service-token verifier for tool endpoints: the caller must be our configured client. */
export function createServiceTokenVerifier({ pool, config }: { pool: AuthPool; config: Pick<Config, 'jwt' | 'service'> }) {
  const keys = keyStoreFor(pool);
  const verified = createVerifiedCache<VerifiedService>(1_000);
  return async (token: string): Promise<VerifiedService> => {
    const cached = verified.get(token);
    if (cached) return cached;
    const payload = await verifyToken(keys, token, {
      kind: 'service',
      issuer: config.jwt.issuer,
      maxAgeS: config.jwt.serviceTokenTtlS,
    });
    if (payload.sub !== config.service.clientId) throw new AuthError('TOKEN_INVALID', 'Unknown service client.');
    const service = { clientId: payload.sub, jti: payload.jti, exp: payload.exp };
    verified.set(token, service, service.exp);
    return service;
  };
}
