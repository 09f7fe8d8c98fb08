/**
 * What every api route needs, built once per app: config, pool, the key store and the two token
 * verifiers (keys cached in memory, so verification costs no database round trip).
 * @module
 */
import {
  createServiceTokenVerifier,
  createUserTokenVerifier,
  keyCipherFor,
  keyStoreFor,
  type KeyStore,
  type VerifiedService,
  type VerifiedUser,
} from '../auth/index.ts';
import type { Config } from '../config.ts';
import type { Pool } from '../db/index.ts';

export interface ApiContext {
  config: Config;
  pool: Pool;
  keys: KeyStore;
  verifyUser(token: string): Promise<VerifiedUser>;
  verifyService(token: string): Promise<VerifiedService>;
}

export function createApiContext({ config, pool }: { config: Config; pool: Pool }): ApiContext {
  return {
    config,
    pool,
    keys: keyStoreFor(pool, keyCipherFor(config)),
    verifyUser: createUserTokenVerifier({ pool, config }),
    verifyService: createServiceTokenVerifier({ pool, config }),
  };
}
