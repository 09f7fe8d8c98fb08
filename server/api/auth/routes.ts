/**
 * /api/auth: login (user JWT), refresh (browser sessions), me, logout (revokes the jti and the
 * cookie session), JWKS, service tokens for the gateway.
 * @module
 */
import cookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import {
  authenticateUser,
  authErrorDetails,
  checkClientCredentials,
  isAuthError,
  issueRefreshToken,
  permissionsForRole,
  revokeRefreshToken,
  revokeToken,
  rotateRefreshToken,
  signServiceToken,
  signUserToken,
} from '../../auth/index.ts';
import { AirlockError } from '../../errors.ts';
import type { ApiContext } from '../context.ts';
import { requestUser, requireUser } from '../identity.ts';
import { createRateLimiter } from '../rate-limit.ts';
import { parseInput } from '../../http/validate.ts';
import { endSessionUrl, oidcProviderFor, registerOidcRoutes } from './oidc-routes.ts';
import { LoginBody, ServiceTokenBody } from './schemas.ts';
import { clearRefreshCookie, REFRESH_COOKIE, requireSameOrigin, setRefreshCookie } from './session-cookie.ts';

/** The gateway asks for a service token about once per SERVICE_TOKEN_TTL_S; this is plenty. */
export const SERVICE_TOKEN_RATE = { limit: 30, windowMs: 60_000 };

export const authRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const { config, pool, keys } = ctx;
  const serviceTokenLimiter = createRateLimiter(SERVICE_TOKEN_RATE);
  // Scoped to /api/auth: no other route reads cookies (the cookie's path keeps it from them anyway).
  await app.register(cookie);
  const provider = oidcProviderFor(ctx);
  await registerOidcRoutes(app, ctx, provider);

  app.post('/login', async (request, reply) => {
    const body = parseInput(LoginBody, request.body, 'body');
    if (!config.passwordLogin) throw new AirlockError('FORBIDDEN', 'Password login is off here: use single sign-on.', { details: { reason: 'password_login_off' } });
    if (body.cookie) requireSameOrigin(request, config);
    try {
      const user = await authenticateUser(pool, { username: body.username, password: body.password, address: request.ip });
      // A browser session's access token is short-lived (the cookie renews it); API and Gradio
      // clients keep the full-lifetime bearer token they always had.
      const ttlS = body.cookie ? config.jwt.sessionAccessTtlS : config.jwt.userTokenTtlS;
      const session = body.cookie ? await issueRefreshToken(pool, { userId: user.id, ttlS: config.jwt.userTokenTtlS }) : null;
      const issued = await signUserToken(keys, { issuer: config.jwt.issuer, ttlS, user, sessionId: session?.familyId });
      if (session) setRefreshCookie(request, reply, session);
      reply.header('cache-control', 'no-store');
      return {
        access_token: issued.token,
        token_type: 'Bearer',
        expires_in: issued.expiresIn,
        user: { id: user.id, username: user.username, role: user.role },
      };
    } catch (error) {
      if (isAuthError(error) && error.code === 'LOGIN_THROTTLED') {
        reply.header('retry-after', String(error.retryAfterS ?? 1));
        throw new AirlockError('RATE_LIMITED', error.message, { details: { retry_after_s: error.retryAfterS } });
      }
      if (isAuthError(error) && error.code === 'USER_DISABLED') throw new AirlockError('UNAUTHORIZED', error.message, { details: authErrorDetails(error) });
      if (isAuthError(error)) throw new AirlockError('UNAUTHORIZED', 'Invalid username or password.');
      throw error;
    }
  });

  app.post('/refresh', async (request, reply) => {
    requireSameOrigin(request, config);
    reply.header('cache-control', 'no-store');
    try {
      const session = await rotateRefreshToken(pool, request.cookies[REFRESH_COOKIE]);
      setRefreshCookie(request, reply, session);
      const issued = await signUserToken(keys, {
        issuer: config.jwt.issuer,
        ttlS: config.jwt.sessionAccessTtlS,
        user: session.user,
        sessionId: session.familyId,
      });
      return { access_token: issued.token, token_type: 'Bearer', expires_in: issued.expiresIn, user: session.user };
    } catch (error) {
      if (!isAuthError(error)) throw error;
      clearRefreshCookie(request, reply);
      const signedIn = request.cookies[REFRESH_COOKIE] !== undefined;
      throw new AirlockError('UNAUTHORIZED', signedIn ? `No session: ${error.message}` : 'No session: sign in first.', {
        details: { session: signedIn ? 'ended' : 'none' },
      });
    }
  });

  app.get('/me', { onRequest: requireUser(ctx) }, async (request) => {
    const user = requestUser(request);
    return { id: user.userId, username: user.username, role: user.role, permissions: permissionsForRole(user.role) };
  });

  app.post('/logout', { onRequest: requireUser(ctx) }, async (request, reply) => {
    const user = requestUser(request);
    await revokeToken(pool, { jti: user.jti, expiresAt: new Date(user.exp * 1000) });
    if (request.cookies[REFRESH_COOKIE] !== undefined) {
      await revokeRefreshToken(pool, request.cookies[REFRESH_COOKIE]);
      clearRefreshCookie(request, reply);
    }
    // An SSO person's browser goes on to the provider's logout, where it has one (issue 39).
    const endSession = await endSessionUrl(provider, ctx, request, user.userId);
    if (endSession) return reply.status(200).send({ end_session_url: endSession });
    return reply.status(204).send();
  });

  app.get('/jwks.json', async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    return keys.jwks();
  });

  app.post('/service-token', async (request, reply) => {
    // Counted before the credentials are checked: guesses and floods cost the caller, not the signer.
    const wait = serviceTokenLimiter.hit(request.ip);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      throw new AirlockError('RATE_LIMITED', 'Too many service-token requests. Try again later.', { details: { retry_after_s: wait } });
    }
    const body = parseInput(ServiceTokenBody, request.body, 'body');
    try {
      checkClientCredentials(config, { clientId: body.client_id, clientSecret: body.client_secret });
    } catch (error) {
      if (isAuthError(error)) throw new AirlockError('UNAUTHORIZED', 'Invalid client credentials.');
      throw error;
    }
    const issued = await signServiceToken(keys, {
      issuer: config.jwt.issuer,
      ttlS: config.jwt.serviceTokenTtlS,
      clientId: body.client_id,
    });
    reply.header('cache-control', 'no-store');
    return { access_token: issued.token, token_type: 'Bearer', expires_in: issued.expiresIn };
  });
};
