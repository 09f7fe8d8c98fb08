/**
 * /api/auth: login (user JWT), me, logout (revokes the jti), JWKS, service tokens for the gateway.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import {
  authenticateUser,
  checkClientCredentials,
  isAuthError,
  permissionsForRole,
  revokeToken,
  signServiceToken,
  signUserToken,
} from '../../auth/index.ts';
import { AirlockError } from '../../errors.ts';
import type { ApiContext } from '../context.ts';
import { requestUser, requireUser } from '../identity.ts';
import { createRateLimiter } from '../rate-limit.ts';
import { parseInput } from '../validate.ts';
import { LoginBody, ServiceTokenBody } from './schemas.ts';

/** The gateway asks for a service token about once per SERVICE_TOKEN_TTL_S; this is plenty. */
export const SERVICE_TOKEN_RATE = { limit: 30, windowMs: 60_000 };

export const authRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const { config, pool, keys } = ctx;
  const serviceTokenLimiter = createRateLimiter(SERVICE_TOKEN_RATE);

  app.post('/login', async (request, reply) => {
    const body = parseInput(LoginBody, request.body, 'body');
    try {
      const user = await authenticateUser(pool, { ...body, address: request.ip });
      const issued = await signUserToken(keys, { issuer: config.jwt.issuer, ttlS: config.jwt.userTokenTtlS, user });
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
      if (isAuthError(error)) throw new AirlockError('UNAUTHORIZED', 'Invalid username or password.');
      throw error;
    }
  });

  app.get('/me', { onRequest: requireUser(ctx) }, async (request) => {
    const user = requestUser(request);
    return { id: user.userId, username: user.username, role: user.role, permissions: permissionsForRole(user.role) };
  });

  app.post('/logout', { onRequest: requireUser(ctx) }, async (request, reply) => {
    const user = requestUser(request);
    await revokeToken(pool, { jti: user.jti, expiresAt: new Date(user.exp * 1000) });
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
