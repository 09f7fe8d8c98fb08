/**
 * Work that runs with no client attached (a queued run, a resume after an approval decided through
 * the API, an expiry) acts as the run's user with a short token signed for them, as the approval
 * recovery does (chat/recovery.ts): the caller's own token may have expired by then.
 * @module
 */
import { getUserById, keyStoreFor, signUserToken, type KeyCipher } from '../../auth/index.ts';
import type { Pool } from '../../db/index.ts';
import { AirlockError } from '../../errors.ts';

/** Long enough for one turn's tools. */
const TOKEN_TTL_S = 300;

export type UserTokenMinter = (userId: string) => Promise<string>;

export function createUserTokenMinter(deps: { pool: Pool; cipher: KeyCipher; issuer: string; userTokenTtlS: number }): UserTokenMinter {
  const keys = keyStoreFor(deps.pool, deps.cipher);
  return async (userId) => {
    const user = await getUserById(deps.pool, userId);
    if (!user) throw new AirlockError('NOT_FOUND', 'The user of this run no longer exists.');
    const { token } = await signUserToken(keys, { issuer: deps.issuer, ttlS: Math.min(TOKEN_TTL_S, deps.userTokenTtlS), user });
    return token;
  };
}
