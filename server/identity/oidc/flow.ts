/**
 * The authorization code flow (issue 39) with openid-client v6: PKCE S256, `state`, `nonce`,
 * `response_mode=query`, the `iss` response parameter checked where the provider sends it (the
 * library does). State, nonce, the PKCE verifier and the return path travel in the `airlock_oidc`
 * cookie (httpOnly, SameSite=Lax: a Strict cookie is not sent on the provider's redirect back),
 * sealed (JWE dir/A256GCM) with a key derived from KEY_ENCRYPTION_KEY, so any replica can finish
 * the flow; it lives 10 minutes and finishes once (oidc_flows_used).
 * @module
 */
import { EncryptJWT, jwtDecrypt } from 'jose';
import * as oidc from 'openid-client';
import type { Queryable } from '../../db/index.ts';
import type { OidcProvider } from './provider.ts';

export const FLOW_COOKIE = 'airlock_oidc';
export const FLOW_COOKIE_PATH = '/api/auth/oidc/';
export const FLOW_TTL_S = 600;

/** Why a sign-in did not finish: the login page says each in words (`/login?sso_error=`). */
export type SsoFailure = 'unmapped' | 'unavailable' | 'state' | 'disabled' | 'tenant';

export class SsoError extends Error {
  override readonly name = 'SsoError';
  constructor(readonly reason: SsoFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

interface Flow {
  state: string;
  nonce: string;
  verifier: string;
  next: string;
}

/** A same-origin path only (never `//host` or a scheme): anything else returns to `/`. */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  return /[\u0000-\u001f]/.test(next) ? '/' : next;
}

export async function startSignIn(provider: OidcProvider, input: { key: Uint8Array; redirectUri: string; next: string; scopes: string }): Promise<{ url: string; cookie: string }> {
  let configuration: oidc.Configuration;
  try {
    configuration = await provider.configuration();
  } catch (error) {
    throw new SsoError('unavailable', (error as Error).message, { cause: error });
  }
  const flow: Flow = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier(), next: safeNext(input.next) };
  const url = oidc.buildAuthorizationUrl(configuration, {
    redirect_uri: input.redirectUri,
    scope: input.scopes,
    response_type: 'code',
    response_mode: 'query',
    code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
    code_challenge_method: 'S256',
    state: flow.state,
    nonce: flow.nonce,
  });
  const cookie = await new EncryptJWT({ ...flow }).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).setIssuedAt().setExpirationTime(`${FLOW_TTL_S}s`).encrypt(input.key);
  return { url: url.href, cookie };
}

/** The flow a cookie carries, or SsoError state (missing, forged, expired). */
export async function openFlow(cookie: string | undefined, key: Uint8Array): Promise<Flow> {
  if (!cookie) throw new SsoError('state', 'The sign-in started elsewhere or too long ago: start it again.');
  try {
    const { payload } = await jwtDecrypt(cookie, key, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
    return payload as unknown as Flow;
  } catch (error) {
    throw new SsoError('state', 'The sign-in could not be checked: start it again.', { cause: error });
  }
}

/**
 * Finishes the flow: the code exchanged (with the verifier), the ID token checked (signature, iss,
 * aud, nonce) and state compared by the library. Returns the ID token's claims and the return path.
 */
export async function finishSignIn(
  provider: OidcProvider,
  db: Queryable,
  input: { key: Uint8Array; cookie: string | undefined; currentUrl: URL },
): Promise<{ claims: oidc.IDToken; next: string }> {
  const flow = await openFlow(input.cookie, input.key);
  const { rowCount } = await db.query(
    `INSERT INTO oidc_flows_used (state, expires_at) VALUES ($1, now() + make_interval(secs => $2)) ON CONFLICT DO NOTHING`,
    [flow.state, FLOW_TTL_S],
  );
  if (rowCount === 0) throw new SsoError('state', 'This sign-in was already used: start it again.');
  let configuration: oidc.Configuration;
  try {
    configuration = await provider.configuration();
  } catch (error) {
    throw new SsoError('unavailable', (error as Error).message, { cause: error });
  }
  try {
    const tokens = await oidc.authorizationCodeGrant(configuration, input.currentUrl, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) throw new Error('no ID token');
    return { claims, next: flow.next };
  } catch (error) {
    // A provider that answers but fails the exchange is "unavailable"; a check that fails is "state".
    const network = error instanceof TypeError || (error as { code?: string }).code === 'OAUTH_TIMEOUT';
    throw new SsoError(network ? 'unavailable' : 'state', `The sign-in was refused: ${(error as Error).message}`, { cause: error });
  }
}
