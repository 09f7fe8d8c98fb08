/**
 * Single sign-on routes (issue 39): `GET /api/auth/providers` (what the login page offers),
 * `GET /api/auth/oidc/login?next=` (302 to the provider), `GET /api/auth/oidc/callback` (the
 * redirect URI to register: `{PUBLIC_URL}/api/auth/oidc/callback`). A finished sign-in starts the
 * same refresh-cookie session as a password login and lands on `/login?sso=1&next=<path>` (the
 * page renews the session, then goes on); a failed one on `/login?sso_error=<reason>`.
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as oidcClient from 'openid-client';
import { issueRefreshToken, keyCipherFor } from '../../auth/index.ts';
import { ConfigError } from '../../config.ts';
import { createOidcProvider, finishSignIn, FLOW_COOKIE, FLOW_COOKIE_PATH, FLOW_TTL_S, parseRoleMap, personOf, RoleMapError, signInPerson, SsoError, startSignIn, type OidcProvider } from '../../identity/oidc/index.ts';
import type { ApiContext } from '../context.ts';
import { ownOrigin, setRefreshCookie } from './session-cookie.ts';

export const CALLBACK_PATH = '/api/auth/oidc/callback';

/** The provider of this api (null without OIDC_ISSUER); a bad OIDC_ROLE_MAP stops the start. */
export function oidcProviderFor(ctx: ApiContext): OidcProvider | null {
  try {
    if (ctx.config.oidc.roleMap) parseRoleMap(ctx.config.oidc.roleMap);
  } catch (error) {
    if (error instanceof RoleMapError) throw new ConfigError(error.message);
    throw error;
  }
  return createOidcProvider(ctx.config.oidc);
}

export async function registerOidcRoutes(app: FastifyInstance, ctx: ApiContext, provider: OidcProvider | null): Promise<void> {
  const { config, pool } = ctx;
  const key = () => keyCipherFor(config).derive('oidc-flow-cookie');
  const redirectUri = (request: FastifyRequest) => `${ownOrigin(request, config)}${CALLBACK_PATH}`;
  const flowCookie = (request: FastifyRequest) => ({ path: FLOW_COOKIE_PATH, httpOnly: true, sameSite: 'lax' as const, secure: request.protocol === 'https' });

  app.get('/providers', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { password: config.passwordLogin, oidc: provider ? { name: provider.name, ...provider.status() } : null };
  });
  if (!provider) return;

  const failed = (request: FastifyRequest, reply: FastifyReply, error: SsoError) => {
    request.log.warn({ reason: error.reason, err: error }, 'single sign-on did not finish');
    reply.clearCookie(FLOW_COOKIE, flowCookie(request));
    return reply.redirect(`/login?sso_error=${error.reason}`, 302);
  };

  app.get('/oidc/login', async (request, reply) => {
    const next = (request.query as { next?: unknown }).next;
    try {
      const flow = await startSignIn(provider, { key: key(), redirectUri: redirectUri(request), next: typeof next === 'string' ? next : '/', scopes: config.oidc.scopes });
      reply.setCookie(FLOW_COOKIE, flow.cookie, { ...flowCookie(request), maxAge: FLOW_TTL_S });
      reply.header('cache-control', 'no-store');
      return reply.redirect(flow.url, 302);
    } catch (error) {
      if (error instanceof SsoError) return failed(request, reply, error);
      throw error;
    }
  });

  app.get('/oidc/callback', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    try {
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
      const { claims, next } = await finishSignIn(provider, pool, { key: key(), cookie: request.cookies[FLOW_COOKIE], currentUrl: new URL(redirectUri(request) + query) });
      const user = await signInPerson(pool, personOf(config.oidc, claims));
      if (user.disabled) throw new SsoError('disabled', 'This account has been disabled.');
      const session = await issueRefreshToken(pool, { userId: user.id, ttlS: config.jwt.userTokenTtlS });
      setRefreshCookie(request, reply, session);
      reply.clearCookie(FLOW_COOKIE, flowCookie(request));
      return reply.redirect(`/login?sso=1&next=${encodeURIComponent(next)}`, 302);
    } catch (error) {
      if (error instanceof SsoError) return failed(request, reply, error);
      throw error;
    }
  });
}

/** Where the browser goes after Airlock's logout of an SSO user: the provider's end_session_endpoint, or null. */
export async function endSessionUrl(provider: OidcProvider | null, ctx: ApiContext, request: FastifyRequest, userId: string): Promise<string | null> {
  if (!provider) return null;
  const { rows } = await ctx.pool.query<{ source: string }>('SELECT source FROM users WHERE id::text = $1', [userId]);
  if (rows[0]?.source !== 'oidc') return null;
  const configuration = await provider.configuration().catch(() => null);
  if (!configuration?.serverMetadata().end_session_endpoint) return null;
  return oidcClient.buildEndSessionUrl(configuration, {
    client_id: ctx.config.oidc.clientId,
    post_logout_redirect_uri: `${ownOrigin(request, ctx.config)}/login?signedout=1`,
  }).href;
}
