/**
 * Token attack table: each forged, stale or misplaced token gets 401 UNAUTHORIZED, and the attempt
 * is audited when it reached a tool endpoint.
 */
import { keyCipherFor } from '../../server/auth/index.ts';
import { generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, startApi, type ApiHarness } from './api-support.ts';

let api: ApiHarness;
let user: string;
let service: string;
let kid: string;
let privateJwk: JWK;
let publicJwk: JWK;
let userId: string;

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  api = await startApi();
  user = await api.login('admin');
  service = await api.serviceToken();
  const { rows } = await api.db.pool.query('SELECT kid, public_jwk, private_jwk FROM signing_keys');
  // Stored sealed (encrypted at rest): the test opens it with the server's own key-encryption key.
  [kid, publicJwk, privateJwk] = [rows[0].kid, rows[0].public_jwk, keyCipherFor(api.server.config).open(rows[0].private_jwk, rows[0].kid)];
  userId = (await api.request('GET', '/api/auth/me', { token: user })).body.id;
});
afterAll(() => api.close());

interface Forge {
  kind?: 'user' | 'service';
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
  key?: 'ours' | 'other';
}

/** Signs a token with our real key (or another one), starting from valid claims of `kind`. */
async function forge({ kind = 'user', header = {}, claims = {}, key = 'ours' }: Forge): Promise<string> {
  const base =
    kind === 'user'
      ? { iss: 'airlock', aud: 'airlock:user', sub: userId, username: 'admin', role: 'admin', jti: crypto.randomUUID() }
      : { iss: 'airlock', aud: 'airlock:service', sub: 'airlock-gateway', jti: crypto.randomUUID() };
  const signingKey = key === 'ours' ? await importJWK(privateJwk, 'ES256') : (await generateKeyPair('ES256')).privateKey;
  return new SignJWT({ ...base, iat: now(), exp: now() + 300, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid, typ: kind === 'user' ? 'user+jwt' : 'service+jwt', ...header })
    .sign(signingKey);
}

function unsigned(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  return `${b64(header)}.${b64(claims)}.`;
}

function hs256WithPublicKey(claims: Record<string, unknown>): string {
  const head = b64({ alg: 'HS256', kid, typ: 'user+jwt' });
  const body = b64(claims);
  const secret = JSON.stringify(publicJwk);
  const sig = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${sig}`;
}

const userClaims = () => ({ iss: 'airlock', aud: 'airlock:user', sub: userId, username: 'admin', role: 'admin', jti: crypto.randomUUID(), iat: now(), exp: now() + 300 });

type Case = { name: string; tokens: () => Promise<{ service?: string | null; user?: string | null }>; blame: 'user' | 'service' };

const CASES: Case[] = [
  { name: 'expired user token', blame: 'user', tokens: async () => ({ user: await forge({ claims: { iat: now() - 4000, exp: now() - 3600 } }) }) },
  { name: 'expired service token', blame: 'service', tokens: async () => ({ service: await forge({ kind: 'service', claims: { iat: now() - 4000, exp: now() - 3600 } }) }) },
  { name: 'not yet valid (nbf in an hour)', blame: 'user', tokens: async () => ({ user: await forge({ claims: { nbf: now() + 3600 } }) }) },
  { name: 'issued in the future (iat in an hour)', blame: 'user', tokens: async () => ({ user: await forge({ claims: { iat: now() + 3600, exp: now() + 7200 } }) }) },
  { name: 'wrong signature (tampered payload)', blame: 'user', tokens: async () => {
    const [h, , s] = user.split('.');
    return { user: `${h}.${b64({ ...userClaims(), role: 'admin' })}.${s}` };
  } },
  { name: 'signed by another key under our kid', blame: 'user', tokens: async () => ({ user: await forge({ key: 'other' }) }) },
  { name: 'wrong (unknown) kid', blame: 'user', tokens: async () => ({ user: await forge({ key: 'other', header: { kid: 'not-our-key' } }) }) },
  { name: 'no kid', blame: 'user', tokens: async () => ({ user: await forge({ header: { kid: undefined } }) }) },
  { name: 'alg none', blame: 'user', tokens: async () => ({ user: unsigned({ alg: 'none', typ: 'user+jwt' }, userClaims()) }) },
  { name: 'alg none service token', blame: 'service', tokens: async () => ({ service: unsigned({ alg: 'none', typ: 'service+jwt' }, { iss: 'airlock', aud: 'airlock:service', sub: 'airlock-gateway', jti: 'x', iat: now(), exp: now() + 60 }) }) },
  { name: 'HS256 signed with the public key', blame: 'user', tokens: async () => ({ user: hs256WithPublicKey(userClaims()) }) },
  { name: 'wrong issuer', blame: 'user', tokens: async () => ({ user: await forge({ claims: { iss: 'evil' } }) }) },
  { name: 'wrong audience', blame: 'user', tokens: async () => ({ user: await forge({ claims: { aud: 'someone-else' } }) }) },
  { name: 'wrong typ header', blame: 'user', tokens: async () => ({ user: await forge({ header: { typ: 'JWT' } }) }) },
  { name: 'user token as the service token', blame: 'service', tokens: async () => ({ service: user }) },
  { name: 'service token as the user token', blame: 'user', tokens: async () => ({ user: service }) },
  { name: 'service token for an unknown client', blame: 'service', tokens: async () => ({ service: await forge({ kind: 'service', claims: { sub: 'intruder' } }) }) },
  { name: 'missing X-User-JWT', blame: 'user', tokens: async () => ({ user: null }) },
  { name: 'missing service token', blame: 'service', tokens: async () => ({ service: null }) },
  { name: 'garbage', blame: 'user', tokens: async () => ({ user: 'a.b.c' }) },
  { name: 'revoked jti (logged out)', blame: 'user', tokens: async () => {
    const token = await api.login('operator');
    expect((await api.request('POST', '/api/auth/logout', { token })).status).toBe(204);
    return { user: token };
  } },
];

describe('token attacks on a tool endpoint', () => {
  CASES.forEach((c, i) => {
    it(`${c.name} -> 401, audited`, async () => {
      const t = await c.tokens();
      const serviceToken = t.service === undefined ? service : t.service;
      const userToken = t.user === undefined ? user : t.user;
      const callId = `attack_${i}`;
      const headers: Record<string, string> = { 'x-tool-call-id': callId, 'x-conversation-id': 'conv-attack' };
      if (userToken) headers['x-user-jwt'] = userToken;
      const res = await api.request('POST', '/api/tools/tasks', { token: serviceToken ?? undefined, body: { title: 'attack' }, headers });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
      expect(res.body.error.details).toEqual({ token: c.blame });
      const rows = await auditRows(api.db, 'tool_call_id = $1', [callId]);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ operation: 'create_task', outcome: 'unauthorized', status_code: 401, error_code: 'UNAUTHORIZED', conversation_id: 'conv-attack' });
      // A user identity is recorded only when it was verified, never from an unverified token.
      expect(rows[0].user_id).toBeNull();
      if (c.blame === 'user' && t.service === undefined) expect(rows[0].service_actor).toBe('airlock-gateway');
    });
  });

  it('no task was created by any attack', async () => {
    const { rows } = await api.db.pool.query("SELECT count(*)::int AS n FROM tasks WHERE title = 'attack'");
    expect(rows[0].n).toBe(0);
  });

  it('the same valid tokens pass (control)', async () => {
    const res = await api.tool('GET', '/api/tools/capabilities', { user });
    expect(res.status).toBe(200);
    const tolerated = await forge({ claims: { iat: now() - 10, exp: now() - 5 } }); // within the clock skew
    expect((await api.tool('GET', '/api/tools/capabilities', { user: tolerated })).status).toBe(200);
  });

  it('UI routes refuse a service token as the user token', async () => {
    const res = await api.request('GET', '/api/assistant/conversations', { token: service });
    expect(res.status).toBe(401);
  });
});
