/**
 * Issuing and verifying tokens against an in-memory key store (no database).
 */
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KeyStore } from '../../../../server/auth/keys.ts';
import { signServiceToken, signUserToken } from '../../../../server/auth/tokens.ts';
import { verifyToken } from '../../../../server/auth/verify.ts';

let keys: KeyStore;
let privateKey: CryptoKey;
beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  privateKey = pair.privateKey;
  const publicJwk = await exportJWK(pair.publicKey);
  keys = {
    signingKey: async () => ({ kid: 'k1', key: pair.privateKey }),
    verificationKey: async (kid) => (kid === 'k1' ? pair.publicKey : null),
    jwks: async () => ({ keys: [{ ...publicJwk, kid: 'k1' }] }),
  };
});

const user = { id: '11111111-1111-4111-8111-111111111111', username: 'ann', role: 'operator' as const };
const opts = (kind: 'user' | 'service') => ({ kind, issuer: 'airlock', maxAgeS: 3600 });

describe('user and service tokens', () => {
  it('a user token verifies as a user token only', async () => {
    const { token, jti, exp } = await signUserToken(keys, { issuer: 'airlock', ttlS: 3600, user });
    const payload = await verifyToken(keys, token, opts('user'));
    expect(payload).toMatchObject({ sub: user.id, role: 'operator', username: 'ann', jti, exp, aud: 'airlock:user' });
    await expect(verifyToken(keys, token, opts('service'))).rejects.toMatchObject({ code: 'TOKEN_INVALID' });
    await expect(verifyToken(keys, token, { ...opts('user'), issuer: 'other' })).rejects.toMatchObject({ code: 'TOKEN_INVALID' });
  });

  it('a service token verifies as a service token only', async () => {
    const { token } = await signServiceToken(keys, { issuer: 'airlock', ttlS: 300, clientId: 'gw' });
    expect((await verifyToken(keys, token, opts('service'))).sub).toBe('gw');
    await expect(verifyToken(keys, token, opts('user'))).rejects.toMatchObject({ code: 'TOKEN_INVALID' });
  });

  it('refuses a token older than the kind allows even if exp is far away', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ username: 'ann', role: 'operator' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'user+jwt' })
      .setIssuer('airlock')
      .setAudience('airlock:user')
      .setSubject(user.id)
      .setJti('j')
      .setIssuedAt(now - 7200)
      .setExpirationTime(now + 3600)
      .sign(privateKey);
    await expect(verifyToken(keys, token, opts('user'))).rejects.toMatchObject({ code: 'TOKEN_INVALID' });
  });

  it('refuses tokens without jti or exp', async () => {
    const base = () =>
      new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'user+jwt' }).setIssuer('airlock').setAudience('airlock:user').setSubject('s').setIssuedAt();
    await expect(verifyToken(keys, await base().setExpirationTime('1h').sign(privateKey), opts('user'))).rejects.toMatchObject({ code: 'TOKEN_INVALID' });
    await expect(verifyToken(keys, await base().setJti('j').sign(privateKey), opts('user'))).rejects.toMatchObject({ code: 'TOKEN_INVALID' });
  });
});
