/**
 * Password login and client-credential checks.
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config.ts';
import type { AuthDb } from './db.ts';
import { AuthError } from './errors.ts';
import { DUMMY_HASH, verifyPassword } from './password.ts';
import { clearLoginFailures, recordLoginFailures, secondsUntilAllowed, throttleRules } from './throttle.ts';
import { findUserWithHash, type User } from './users.ts';

/**
 * Checks a username and password from `address` (the peer or a trusted proxy's X-Forwarded-For).
 * Throws AuthError LOGIN_THROTTLED (with retryAfterS) while the pair, the username or the address
 * is locked (throttle.ts), CREDENTIALS_INVALID for an unknown user, a user with no password (SSO)
 * or a wrong password (same time cost either way), USER_DISABLED for a disabled one.
 */
export async function authenticateUser(
  db: AuthDb,
  input: { username: string; password: string; address: string },
): Promise<User> {
  const rules = throttleRules(input);
  const wait = await secondsUntilAllowed(db, rules.map((r) => r.key));
  if (wait > 0) throw new AuthError('LOGIN_THROTTLED', 'Too many failed logins. Try again later.', { retryAfterS: wait });
  const found = await findUserWithHash(db, input.username);
  // SSO and proxy users have no password: the same answer, and time, as an unknown user.
  const user = found?.passwordHash ? found : null;
  const ok = await verifyPassword(input.password, user?.passwordHash ?? DUMMY_HASH);
  if (!user || !ok) {
    await recordLoginFailures(db, rules);
    throw new AuthError('CREDENTIALS_INVALID', 'Invalid username or password.');
  }
  await clearLoginFailures(db, rules.filter((r) => r.clearedBySuccess).map((r) => r.key));
  // Said only to whoever knows the password: the account exists, and an admin switched it off.
  if (user.disabledAt) throw new AuthError('USER_DISABLED', 'This account has been disabled.');
  const { passwordHash: _hash, ...publicUser } = user;
  return publicUser;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Checks the gateway's client credentials against the config, in constant time. */
export function checkClientCredentials(
  config: Pick<Config, 'service'>,
  input: { clientId: string; clientSecret: string },
): void {
  const idOk = timingSafeEqual(digest(input.clientId), digest(config.service.clientId));
  const secretOk = timingSafeEqual(digest(input.clientSecret), digest(config.service.clientSecret));
  if (!idOk || !secretOk) throw new AuthError('CREDENTIALS_INVALID', 'Invalid client credentials.');
}
