/**
 * The web role: serves the built SvelteKit app (adapter-node handler) for every route the other
 * roles do not own.
 * @module
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';

const HANDLER = fileURLToPath(new URL('../../build/handler.js', import.meta.url));

type NodeHandler = (req: unknown, res: unknown, next: () => void) => void;

export const webRoutes: FastifyPluginAsync = async (app) => {
  const handler: NodeHandler | undefined = existsSync(HANDLER)
    ? ((await import(pathToFileURL(HANDLER).href)) as { handler: NodeHandler }).handler
    : undefined;
  if (!handler) app.log.warn('the UI is not built (run `npm run build`); the web role answers 503');

  app.setNotFoundHandler((request, reply) => {
    if (request.url.startsWith('/api/')) {
      return reply.status(404).send({ error: { code: 'NOT_FOUND', message: `No route ${request.method} ${request.url.split('?')[0]}` } });
    }
    if (!handler) return reply.status(503).type('text/plain').send('The UI is not built. Run `npm run build`.');
    reply.hijack();
    // Pages carry SvelteKit's own CSP (kit.csp); assets need none. The API's strict policy must not
    // ride on a page's 304, which the browser would merge into the cached page and break it.
    reply.raw.removeHeader('content-security-policy');
    handler(request.raw, reply.raw, () => {
      reply.raw.statusCode = 404;
      reply.raw.end('Not found');
    });
  });
};
