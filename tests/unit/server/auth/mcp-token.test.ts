/**
 * MCP tokens (issue 30): minted per call for one tool server, and refused by Airlock's own
 * verifiers whatever kind they are presented as. In-memory key store (no database).
 */
import { createLocalJWKSet, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KeyStore } from '../../../../server/auth/keys.ts';
import { MCP_TOKEN_MAX_TTL_S, signMcpToken } from '../../../../server/auth/mcp-token.ts';
import { signUserToken } from '../../../../server/auth/tokens.ts';
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
    jwks: async () => ({ keys: [{ ...publicJwk, kid: 'k1', alg: 'ES256' }] }),
  };
});

const userId = '11111111-1111-4111-8111-111111111111';
const mint = (ttlS?: number) => signMcpToken(keys, { issuer: 'airlock', server: 'tickets', userId, tool: 'create_ticket', ttlS });

describe('signMcpToken', () => {
  it('typ mcp+jwt, aud mcp:<server>, the user as sub, the tool, at most 60 s; verifiable with our JWKS', async () => {
    const token = await mint();
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: 'k1', typ: 'mcp+jwt' });
    const { payload } = await jwtVerify(token, createLocalJWKSet(await keys.jwks()), { issuer: 'airlock', audience: 'mcp:tickets', typ: 'mcp+jwt' });
    expect(payload).toMatchObject({ iss: 'airlock', aud: 'mcp:tickets', sub: userId, tool: 'create_ticket' });
    expect(payload.exp! - payload.iat!).toBe(MCP_TOKEN_MAX_TTL_S);
    expect(MCP_TOKEN_MAX_TTL_S).toBeLessThanOrEqual(60);
    expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(5);
    expect(typeof payload.jti).toBe('string');
  });

  it('a longer lifetime asked for is capped at 60 s', async () => {
    const { payload } = await jwtVerify(await mint(3600), createLocalJWKSet(await keys.jwks()), { audience: 'mcp:tickets' });
    expect(payload.exp! - payload.iat!).toBe(60);
  });
});

describe("Airlock's verifiers refuse tokens made for anyone else", () => {
  const asKind = (kind: 'user' | 'service') => ({ kind, issuer: 'airlock', maxAgeS: 3600 });

  it('an MCP token is neither a user nor a service token', async () => {
    const token = await mint();
    await expect(verifyToken(keys, token, asKind('user'))).rejects.toMatchObject({ code: 'TOKEN_INVALID' });
    await expect(verifyToken(keys, token, asKind('service'))).rejects.toMatchObject({ code: 'TOKEN_INVALID' });
  });

  it("a token naming our audience among others is refused (jose alone would take it); ours alone still verifies", async () => {
    const now = Math.floor(Date.now() / 1000);
    const withAudience = (aud: string | string[]) =>
      new SignJWT({ username: 'ann', role: 'operator' })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'user+jwt' })
        .setIssuer('airlock')
        .setAudience(aud)
        .setSubject(userId)
        .setJti(crypto.randomUUID())
        .setIssuedAt(now)
        .setExpirationTime(now + 300)
        .sign(privateKey);
    await expect(verifyToken(keys, await withAudience(['airlock:user', 'mcp:tickets']), asKind('user'))).rejects.toMatchObject({ code: 'TOKEN_INVALID' });
    await expect(verifyToken(keys, await withAudience(['airlock:user']), asKind('user'))).rejects.toMatchObject({ code: 'TOKEN_INVALID' });
    await expect(verifyToken(keys, await withAudience('mcp:tickets'), asKind('user'))).rejects.toMatchObject({ code: 'TOKEN_INVALID' });
    expect((await verifyToken(keys, await withAudience('airlock:user'), asKind('user'))).sub).toBe(userId);
    const { token } = await signUserToken(keys, { issuer: 'airlock', ttlS: 300, user: { id: userId, username: 'ann', role: 'operator' } });
    expect((await verifyToken(keys, token, asKind('user'))).aud).toBe('airlock:user');
  });
});
