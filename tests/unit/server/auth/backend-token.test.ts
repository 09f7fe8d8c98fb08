/**
 * The two backend JWTs of an `openapi` source with `identity: dual_jwt` (issue 41): ES256 with our
 * key, typ backend-service+jwt / backend-user+jwt, aud the source's audience, at most 60 s, own
 * jti each, the claims a backend checks; an Airlock or MCP audience is refused; Airlock's own
 * verifiers refuse both. In-memory key store (no database).
 */
import { createLocalJWKSet, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_TOKEN_TTL_S, reservedAudience, signBackendTokens } from '../../../../server/auth/backend-token.ts';
import type { KeyStore } from '../../../../server/auth/keys.ts';
import { verifyToken } from '../../../../server/auth/verify.ts';

let keys: KeyStore;
beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = await exportJWK(pair.publicKey);
  keys = {
    signingKey: async () => ({ kid: 'k1', key: pair.privateKey }),
    verificationKey: async (kid) => (kid === 'k1' ? pair.publicKey : null),
    jwks: async () => ({ keys: [{ ...publicJwk, kid: 'k1', alg: 'ES256' }] }),
  };
});

const input = (audience = 'billing', approval?: { id: string; actionHash?: string }) => ({
  issuer: 'airlock', audience, clientId: 'airlock-gateway', tool: 'billing_refund_invoice', approval,
  user: { id: 'u-1', username: 'ann', role: 'operator', tenant: 'acme' },
});

describe('signBackendTokens', () => {
  it('a service token naming the gateway and a user token naming the person, the tool and the approval', async () => {
    const { service, user } = await signBackendTokens(keys, input('billing', { id: 'ap-1', actionHash: 'h-1' }));
    const jwks = createLocalJWKSet(await keys.jwks());
    expect(decodeProtectedHeader(service)).toEqual({ alg: 'ES256', kid: 'k1', typ: 'backend-service+jwt' });
    expect(decodeProtectedHeader(user)).toEqual({ alg: 'ES256', kid: 'k1', typ: 'backend-user+jwt' });
    const s = (await jwtVerify(service, jwks, { issuer: 'airlock', audience: 'billing', typ: 'backend-service+jwt' })).payload;
    const u = (await jwtVerify(user, jwks, { issuer: 'airlock', audience: 'billing', typ: 'backend-user+jwt' })).payload;
    expect(s).toMatchObject({ sub: 'airlock-gateway' });
    expect(u).toMatchObject({ sub: 'u-1', preferred_username: 'ann', role: 'operator', tenant: 'acme', tool: 'billing_refund_invoice', approval_id: 'ap-1', action_hash: 'h-1' });
    for (const p of [s, u]) expect(p.exp! - p.iat!).toBe(BACKEND_TOKEN_TTL_S);
    expect(BACKEND_TOKEN_TTL_S).toBeLessThanOrEqual(60);
    expect(s.jti).not.toBe(u.jti);
    // One token cannot pass for the other: their typ differs.
    await expect(jwtVerify(service, jwks, { audience: 'billing', typ: 'backend-user+jwt' })).rejects.toThrow(/typ/);
  });

  it('without an approval, the user token names none', async () => {
    const { user } = await signBackendTokens(keys, input());
    const u = (await jwtVerify(user, createLocalJWKSet(await keys.jwks()), { audience: 'billing' })).payload;
    expect(u.approval_id).toBeUndefined();
    expect(u.action_hash).toBeUndefined();
  });

  it.each(['airlock:user', 'airlock:service', 'AIRLOCK:user', 'mcp:tickets', ' airlock:user'])('refuses the reserved audience %j', async (audience) => {
    expect(reservedAudience(audience)).toMatch(/reserved/);
    await expect(signBackendTokens(keys, input(audience))).rejects.toThrow(/reserved/);
  });

  it("Airlock's verifiers refuse both", async () => {
    const { service, user } = await signBackendTokens(keys, input());
    for (const token of [service, user]) for (const kind of ['user', 'service'] as const) {
      await expect(verifyToken(keys, token, { kind, issuer: 'airlock', maxAgeS: 3600 })).rejects.toMatchObject({ code: 'TOKEN_INVALID' });
    }
  });
});
