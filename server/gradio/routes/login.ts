/**
 * `POST /login` and `GET /logout` under the mount (upstream's cookie session; the JS client posts
 * multipart, the Python client form-urlencoded). Registered only when the plugin has `login`.
 * Wrong credentials answer 401 `{"detail": "Incorrect credentials."}`: upstream says 400, but both
 * clients report "invalid credentials" only for a 401.
 * @module
 */
import type { FastifyInstance, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { GradioContext } from '../context.ts';
import { clearCookieLine, cookieName, readCookie, setCookieLine } from '../cookie-session.ts';
import { RequestRejectedError } from '../errors.ts';

/** Longest username/password accepted (a bound on what reaches `login`). */
const FIELD_MAX = 1024;

async function credentials(request: FastifyRequest): Promise<{ username: string; password: string }> {
  let fields: Record<string, unknown> = {};
  if (request.isMultipart()) {
    for await (const part of request.parts()) {
      if (part.type === 'file') part.file.resume();
      else fields[part.fieldname] = part.value;
    }
  } else if (request.body && typeof request.body === 'object') fields = request.body as Record<string, unknown>;
  const { username, password } = fields;
  if (typeof username !== 'string' || typeof password !== 'string' || username.length > FIELD_MAX || password.length > FIELD_MAX) {
    throw new RequestRejectedError(422, 'username and password form fields are required.', 'VALIDATION_FAILED', 'username');
  }
  return { username: username.trim(), password };
}

/** Registers login and logout. */
export function registerLoginRoutes(app: FastifyInstance, ctx: GradioContext): void {
  const { login, logout } = ctx.options;
  if (!login) return;
  const name = cookieName(ctx.mountPath);
  const cookieOptions = (request: FastifyRequest) => ({ path: ctx.mountPath || '/', secure: request.protocol === 'https' });
  const optionalAuth = { config: { optionalAuth: true } } as RouteShorthandOptions;

  const handler = async (request: FastifyRequest, reply: import('fastify').FastifyReply) => {
    const { username, password } = await credentials(request);
    const token = await login(username, password, { ip: request.ip, headers: request.headers });
    if (!token) throw new RequestRejectedError(401, 'Incorrect credentials.', 'UNAUTHORIZED');
    reply.header('set-cookie', setCookieLine(name, token, cookieOptions(request))).header('cache-control', 'no-store');
    return { success: true };
  };
  for (const path of ['/login', '/login/']) app.post(path, optionalAuth, handler);

  app.get('/logout', optionalAuth, async (request, reply) => {
    const token = readCookie(request.headers.cookie, name);
    if (token && logout) await logout(token);
    reply.header('set-cookie', clearCookieLine(name, cookieOptions(request)));
    return reply.redirect(`${ctx.mountPath}/`, 302);
  });
}
