/**
 * Signing keys at rest, through the real process and an external DATABASE_URL: a plaintext key
 * left by an earlier version is sealed at start and keeps signing (tokens stay valid); a start
 * with another KEY_ENCRYPTION_KEY stops with one line that names the setting.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { runMainToExit, startMain } from '../helpers/main-process.ts';

const KEK = 'key-encryption-start-test-kek-0123456789';
let db: TestDatabase;
let dataDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'airlock-kek-start-'));
});
afterAll(async () => {
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('signing keys sealed at rest (real process)', () => {
  it('1. seals a plaintext key of an earlier version at start, and signs with the same key', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = await calculateJwkThumbprint(await exportJWK(publicKey));
    await db.pool.query('INSERT INTO signing_keys (kid, alg, public_jwk, private_jwk) VALUES ($1, $2, $3, $4)', [
      kid,
      'ES256',
      { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' },
      { ...(await exportJWK(privateKey)), kid, alg: 'ES256' },
    ]);

    const main = await startMain([], { DATABASE_URL: db.url, DATA_DIR: dataDir, KEY_ENCRYPTION_KEY: KEK });
    try {
      const { rows } = await db.pool.query('SELECT private_jwk FROM signing_keys WHERE kid = $1', [kid]);
      expect(rows[0].private_jwk).not.toHaveProperty('d');
      expect(rows[0].private_jwk).toMatchObject({ sealed: 'A256GCM' });
      expect(decodeProtectedHeader(await login(main.url, 'viewer')).kid).toBe(kid);
    } finally {
      await main.stop();
    }
  });

  it('2. another KEY_ENCRYPTION_KEY: one line naming the setting, exit 1', async () => {
    const result = await runMainToExit(dataDir, { DATABASE_URL: db.url, KEY_ENCRYPTION_KEY: 'a-different-key-encryption-key-0123456789' });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Airlock cannot start: signing key \S+ was sealed with another key-encryption key .*set KEY_ENCRYPTION_KEY/);
  });
});
