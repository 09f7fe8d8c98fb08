import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createKeyCipher, isSealed, keyCipherFor, KeyCipherError } from '../../../../server/auth/key-cipher.ts';

const jwk = { kty: 'EC', crv: 'P-256', x: 'xx', y: 'yy', d: 'the-private-scalar', kid: 'k1' };

describe('key cipher', () => {
  const cipher = createKeyCipher('a-key-encryption-key-of-32-chars!!');

  it('seals so that nothing of the private key shows, and opens it again', () => {
    const sealed = cipher.seal(jwk, 'k1');
    expect(isSealed(sealed)).toBe(true);
    expect(JSON.stringify(sealed)).not.toContain('the-private-scalar');
    expect(sealed).not.toHaveProperty('d');
    expect(cipher.open(sealed, 'k1')).toEqual(jwk);
    expect(cipher.seal(jwk, 'k1').iv).not.toBe(sealed.iv); // a fresh nonce each time
  });

  it('refuses another KEK, a tampered ciphertext and a sealed key moved to another kid', () => {
    const sealed = cipher.seal(jwk, 'k1');
    expect(() => createKeyCipher('another-key-encryption-key-32-chars').open(sealed, 'k1')).toThrow(/KEY_ENCRYPTION_KEY/);
    const flipped = Buffer.from(sealed.data, 'base64url');
    flipped[0] ^= 1;
    expect(() => cipher.open({ ...sealed, data: flipped.toString('base64url') }, 'k1')).toThrow(KeyCipherError);
    expect(() => cipher.open(sealed, 'k2')).toThrow(KeyCipherError);
  });

  it('passes a plaintext key of an older version through (it is sealed at start)', () => {
    expect(cipher.open(jwk, 'k1')).toEqual(jwk);
  });

  it('without KEY_ENCRYPTION_KEY keeps a 0600 file under DATA_DIR that later starts reuse', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'airlock-kek-'));
    try {
      const first = keyCipherFor({ dataDir, keyEncryptionKey: undefined });
      const file = join(dataDir, 'key-encryption.key');
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await readFile(file, 'utf8')).trim().length).toBeGreaterThanOrEqual(32);
      const again = createKeyCipher((await readFile(file, 'utf8')).trim());
      expect(again.open(first.seal(jwk, 'k1'), 'k1')).toEqual(jwk);
      expect(keyCipherFor({ dataDir, keyEncryptionKey: 'x'.repeat(32) }).id).not.toBe(first.id);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
