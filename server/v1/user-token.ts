/**
 * Headless work acts as the run's user with a token signed for them when it starts, as the
 * approval recovery does (approvals/recovery.ts): every turn of a headless run (its first, each resume
 * after a decision made anywhere, a retry) gets one minted for it (run-service.ts prepareTurn), so
 * a run resumed after a long approval wait or a retried job never carries an expired token, and a
 * turn's token outlives the turn (AGENT_TOKEN_TTL_S).
 * @module
 */
import { getUserById, keyStoreFor, signUserToken, type KeyCipher } from '../auth/index.ts';
import type { Pool } from '../db/index.ts';
import { AirlockError } from '../errors.ts';

export type UserTokenMinter = (userId: string) => Promise<string>;

export function createUserTokenMinter(deps: { pool: Pool; cipher: KeyCipher; issuer: string; userTokenTtlS: number; agentTokenTtlS: number }): UserTokenMinter {
  const keys = keyStoreFor(deps.pool, deps.cipher);
  // Never longer than a token the user could get by logging in (the verifier refuses those).
  const ttlS = Math.min(deps.agentTokenTtlS, deps.userTokenTtlS);
  return async (userId) => {
    const user = await getUserById(deps.pool, userId);
    if (!user) throw new AirlockError('NOT_FOUND', 'The user of this run no longer exists.');
    const { token } = await signUserToken(keys, { issuer: deps.issuer, ttlS, user });
    return token;
  };
}
