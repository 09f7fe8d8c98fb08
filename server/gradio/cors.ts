/**
 * Optional CORS for browsers on another origin (gradio-protocol.md §9): reflect the origin with
 * credentials and answer preflights. Same origin (the product path) needs none of it.
 * @module
 */
import type { FastifyInstance } from 'fastify';

/** Adds the CORS hook and the preflight route to the plugin's context. */
export function registerCors(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (!origin) return;
    reply.header('Access-Control-Allow-Origin', origin).header('Access-Control-Allow-Credentials', 'true').header('Vary', 'Origin');
  });
  app.options('/*', { config: { public: true } }, async (request, reply) => {
    const requested = request.headers['access-control-request-headers'];
    reply
      .header('Access-Control-Allow-Methods', 'GET, POST, HEAD, OPTIONS')
      .header('Access-Control-Allow-Headers', typeof requested === 'string' ? requested : 'Content-Type, Authorization')
      .header('Access-Control-Max-Age', '600')
      .status(204)
      .send();
  });
}
