/**
 * Signing keys: ES256, generated on first start and kept in `signing_keys` with a kid (the JWK
 * thumbprint), so a restart (or another replica) keeps verifying tokens already issued. Concurrent
 * first starts agree because creation runs under a transaction-level advisory lock. Imported keys
 * are cached by kid: verification never touches the database for a known key. Private halves are
 * stored sealed (key-cipher.ts); plaintext rows of older versions are sealed in place at start.
 * @module
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { AuthDb, AuthPool } from './db.ts';
import type { KeyCipher, SealedJwk } from './key-cipher.ts';

export const SIGNING_ALG = 'ES256';

export interface SigningKey {
  kid: string;
  key: CryptoKey;
}

export interface KeyStore {
  /** The key new tokens are signed with (created on first use). */
  signingKey(): Promise<SigningKey>;
  /** The public key for `kid`, or null when no such key exists. */
  verificationKey(kid: string): Promise<CryptoKey | null>;
  /** Public keys as a JWK Set. */
  jwks(): Promise<{ keys: JWK[] }>;
}

interface KeyRow {
  kid: string;
  alg: string;
  public_jwk: JWK;
  private_jwk: JWK | SealedJwk;
}

/**
 * Seals every plaintext private key (rows written before encryption at rest); returns how many.
 * Idempotent and safe to run from several processes: each row is rewritten only while plaintext.
 */
export async function sealPlaintextKeys(db: AuthDb, cipher: KeyCipher): Promise<number> {
  const { rows } = await db.query<KeyRow>("SELECT kid, private_jwk FROM signing_keys WHERE private_jwk ? 'd'");
  for (const row of rows) {
    await db.query("UPDATE signing_keys SET private_jwk = $2 WHERE kid = $1 AND private_jwk ? 'd'", [
      row.kid,
      cipher.seal(row.private_jwk as JWK, row.kid),
    ]);
  }
  return rows.length;
}

async function readActiveKey(db: AuthDb): Promise<KeyRow | null> {
  const { rows } = await db.query<KeyRow>(
    'SELECT kid, alg, public_jwk, private_jwk FROM signing_keys WHERE active ORDER BY created_at DESC, kid LIMIT 1',
  );
  return rows[0] ?? null;
}

/** Returns the active key, creating one when there is none; race-safe across processes. */
async function ensureActiveKey(pool: AuthPool, cipher: KeyCipher): Promise<KeyRow> {
  const existing = await readActiveKey(pool);
  if (existing) return existing;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query("SELECT pg_advisory_xact_lock(hashtext('airlock:signing-key'))");
    let row = await readActiveKey(client);
    if (!row) {
      const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
      const publicJwk = await exportJWK(publicKey);
      const kid = await calculateJwkThumbprint(publicJwk);
      row = {
        kid,
        alg: SIGNING_ALG,
        public_jwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' },
        private_jwk: cipher.seal({ ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG }, kid),
      };
      await client.query('INSERT INTO signing_keys (kid, alg, public_jwk, private_jwk) VALUES ($1, $2, $3, $4)', [
        row.kid,
        row.alg,
        row.public_jwk,
        row.private_jwk,
      ]);
    }
    await client.query('COMMIT');
    return row;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/**
 * A key store over the database; keep one per pool (see `keyStoreFor`). Verifying needs no
 * cipher; signing does.
 */
export function createKeyStore(pool: AuthPool, cipher?: KeyCipher): KeyStore & { cipher?: KeyCipher } {
  let signing: Promise<SigningKey> | undefined;
  const publicKeys = new Map<string, Promise<CryptoKey | null>>();

  const loadPublic = async (kid: string): Promise<CryptoKey | null> => {
    const { rows } = await pool.query<KeyRow>('SELECT kid, alg, public_jwk FROM signing_keys WHERE kid = $1', [kid]);
    const row = rows[0];
    if (!row || row.alg !== SIGNING_ALG) return null;
    return (await importJWK(row.public_jwk, SIGNING_ALG)) as CryptoKey;
  };

  let sealer = cipher;
  return {
    get cipher() {
      return sealer;
    },
    set cipher(value) {
      sealer = value;
    },
    signingKey() {
      const kek = sealer;
      if (!kek) return Promise.reject(new Error('this key store has no key cipher, so it cannot sign'));
      signing ??= sealPlaintextKeys(pool, kek)
        .then(() => ensureActiveKey(pool, kek))
        .then(async (row) => ({
          kid: row.kid,
          key: (await importJWK(kek.open(row.private_jwk, row.kid), SIGNING_ALG)) as CryptoKey,
        }));
      signing.catch(() => (signing = undefined)); // a failed first attempt may be retried
      return signing;
    },
    verificationKey(kid) {
      let key = publicKeys.get(kid);
      if (!key) {
        key = loadPublic(kid);
        publicKeys.set(kid, key);
        // Unknown kids are not remembered: a key another replica creates later must still verify,
        // and a flood of junk kids must not grow the cache.
        key.then((k) => k === null && publicKeys.delete(kid), () => publicKeys.delete(kid));
      }
      return key;
    },
    async jwks() {
      await this.signingKey();
      const { rows } = await pool.query<KeyRow>('SELECT public_jwk FROM signing_keys ORDER BY created_at DESC, kid');
      return { keys: rows.map((r) => r.public_jwk) };
    },
  };
}

const stores = new WeakMap<AuthPool, ReturnType<typeof createKeyStore>>();

/**
 * The one key store of a pool, shared by the api and the gateway in one process. Verifiers call
 * it without a cipher; the first caller that signs (the api) brings one.
 */
export function keyStoreFor(pool: AuthPool, cipher?: KeyCipher): KeyStore {
  let store = stores.get(pool);
  if (!store) {
    store = createKeyStore(pool, cipher);
    stores.set(pool, store);
  }
  store.cipher ??= cipher;
  return store;
}
