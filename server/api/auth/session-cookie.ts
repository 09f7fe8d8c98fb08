/**
 * Browser sessions (issue 8): the refresh token lives in an httpOnly, SameSite=Strict cookie that
 * only /api/auth/ ever receives, so no script (and no XSS) can read it; the access token the UI
 * gets from login/refresh is short-lived and kept in memory. Every request that spends the cookie
 * must come from our own origin (the Origin header), which stops a cross-site page from minting
 * tokens with the victim's cookie even where SameSite is not honoured.
 * @module
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IssuedRefresh } from '../../auth/index.ts';
import type { Config } from '../../config.ts';
import { AirlockError } from '../../errors.ts';

export const REFRESH_COOKIE = 'airlock_refresh';
export const REFRESH_COOKIE_PATH = '/api/auth/';

/** Pure: may a request whose Origin header is `origin` use the cookie, when we are `expected`? */
export function originAllowed(origin: string | undefined, expected: string): boolean {
  if (!origin || origin === 'null') return false;
  try {
    return new URL(origin).origin === new URL(expected).origin;
  } catch {
    return false;
  }
}

/** Our own origin: PUBLIC_URL when set, else the scheme and host the (trusted) proxy saw. */
export function ownOrigin(request: FastifyRequest, config: Pick<Config, 'publicUrl'>): string {
  return config.publicUrl ?? `${request.protocol}://${request.host}`;
}

/** Throws FORBIDDEN unless the request comes from our own origin. */
export function requireSameOrigin(request: FastifyRequest, config: Pick<Config, 'publicUrl'>): void {
  if (!originAllowed(request.headers.origin, ownOrigin(request, config))) {
    throw new AirlockError('FORBIDDEN', 'Session cookies are only accepted from this site (Origin header).', {
      details: { origin: request.headers.origin ?? null },
    });
  }
}

export function setRefreshCookie(request: FastifyRequest, reply: FastifyReply, issued: IssuedRefresh): void {
  reply.setCookie(REFRESH_COOKIE, issued.token, {
    path: REFRESH_COOKIE_PATH,
    httpOnly: true,
    sameSite: 'strict',
    secure: request.protocol === 'https',
    expires: issued.expiresAt,
  });
}

export function clearRefreshCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(REFRESH_COOKIE, { path: REFRESH_COOKIE_PATH, httpOnly: true, sameSite: 'strict', secure: request.protocol === 'https' });
}
