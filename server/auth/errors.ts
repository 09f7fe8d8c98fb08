/**
 * auth's own errors (auth imports nothing of ours but config); `api` and `chat` map them to
 * UNAUTHORIZED / RATE_LIMITED. The `code` is the contract, the class a convenience.
 * @module
 */

export type AuthErrorCode =
  /** Malformed, wrong signature, wrong key, wrong alg/typ/iss/aud, expired, not yet valid. */
  | 'TOKEN_INVALID'
  /** A well-formed token that was logged out. */
  | 'TOKEN_REVOKED'
  /** The person was disabled by an admin (issue 39): every token they hold is refused. */
  | 'USER_DISABLED'
  /** Unknown user, wrong password, unknown client or wrong secret. */
  | 'CREDENTIALS_INVALID'
  /** Too many failed logins for this user and address; retry after `retryAfterS`. */
  | 'LOGIN_THROTTLED';

export class AuthError extends Error {
  override readonly name = 'AuthError';
  readonly code: AuthErrorCode;
  readonly retryAfterS?: number;

  constructor(code: AuthErrorCode, message: string, options: { cause?: unknown; retryAfterS?: number } = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    this.retryAfterS = options.retryAfterS;
  }
}

/** What a 401 says in `details` beyond the message: `{reason: "user_disabled"}` for a disabled person. */
export function authErrorDetails(error: unknown): { reason: 'user_disabled' } | undefined {
  return isAuthError(error) && error.code === 'USER_DISABLED' ? { reason: 'user_disabled' } : undefined;
}

/** Matches by name, so it survives duplicate module copies. */
export function isAuthError(error: unknown): error is AuthError {
  return error instanceof Error && error.name === 'AuthError' && 'code' in error;
}
