/**
 * The Gradio server's `/login` and `/logout` for Airlock users: the same password check (and
 * throttling) as `POST /api/auth/login`, answered with a user JWT that the chat authenticator
 * then reads from the cookie; logout revokes that token's jti, as `POST /api/auth/logout` does.
 * @module
 */
import { authenticateUser, isAuthError, keyStoreFor, revokeToken, signUserToken } from '../../auth/index.ts';
import type { Config } from '../../config.ts';
import type { Pool } from '../../db/index.ts';
import { GradioError, RequestRejectedError, type GradioPluginOptions } from '../../gradio/index.ts';

type Verify = (token: string) => Promise<{ jti: string; exp: number }>;

/** 400 VALIDATION_ERROR in Gradio's shape (`detail`) with the taxonomy's `error` beside it. */
function nulRefused(field: 'username' | 'password'): GradioError {
  const message = `${field}: must not contain the NUL character`;
  return new GradioError('VALIDATION_ERROR', 400, { detail: message, error: { code: 'VALIDATION_ERROR', message, retryable: false, details: [{ path: field, message }] } });
}

/** 429 while the login is delayed (auth/throttle.ts), with its `Retry-After` (≤ 30 s), as the REST login. */
class LoginDelayedError extends RequestRejectedError {
  constructor(
    message: string,
    readonly retryAfterS: number,
  ) {
    super(429, message, 'RATE_LIMITED');
  }
}

/** `login` and `logout` options for gradioPlugin. */
export function gradioLogin(deps: { pool: Pool; config: Pick<Config, 'jwt' | 'passwordLogin'>; verify: Verify }): Pick<GradioPluginOptions, 'login' | 'logout'> {
  return {
    async login(username, password, { ip }) {
      // PASSWORD_LOGIN=false (issue 39): single sign-on only, here as on the login page.
      if (!deps.config.passwordLogin) return null;
      // PostgreSQL text cannot hold U+0000: refused here as the REST login refuses it, not as a 500.
      if (username.includes('\u0000') || password.includes('\u0000')) throw nulRefused(username.includes('\u0000') ? 'username' : 'password');
      try {
        const user = await authenticateUser(deps.pool, { username, password, address: ip });
        const issued = await signUserToken(keyStoreFor(deps.pool), { issuer: deps.config.jwt.issuer, ttlS: deps.config.jwt.userTokenTtlS, user });
        return issued.token;
      } catch (error) {
        if (isAuthError(error) && error.code === 'LOGIN_THROTTLED') throw new LoginDelayedError(error.message, error.retryAfterS ?? 1);
        if (isAuthError(error)) return null;
        throw error;
      }
    },
    async logout(token) {
      try {
        const { jti, exp } = await deps.verify(token);
        await revokeToken(deps.pool, { jti, expiresAt: new Date(exp * 1000) });
      } catch (error) {
        if (!isAuthError(error)) throw error; // an invalid or revoked token has nothing to revoke
      }
    },
  };
}
