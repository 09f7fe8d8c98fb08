/**
 * Builds the Fastify instance for a set of roles. `main.ts` listens; tests call `buildApp` and
 * `listen` on port 0.
 * @module
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config, Role } from './config.ts';
import type { Pool } from './db/index.ts';
import { registerErrorHandler } from './error-handler.ts';
import { loggerOptions } from './log-format.ts';
import { serializeRequest } from './log-redact.ts';
import { registerSecurityHeaders } from './security-headers.ts';
import { registerServerTiming } from './timing/fastify.ts';
import { apiRoutes } from './api/index.ts';
import { gatewayRoutes, type GatewayOptions } from './gateway.ts';
import { webRoutes } from './web/index.ts';
import { createServiceTokenVerifier, createUserTokenVerifier } from './auth/index.ts';
import { prometheusRoute } from './v1/prometheus-route.ts';
import { anyEndpointNames, loadWebhooks } from './v1/index.ts';
import type { PolicyFile } from './policy/index.ts';

export interface AppOptions {
  config: Config;
  roles: readonly Role[];
  /** Needed by the api and gateway roles. */
  pool?: Pool;
  /** Database URL the pool uses (the gateway's checkpointer opens its own connections). */
  databaseUrl?: string;
  /** The tool policy, when the caller loaded it already (main.ts, before the database); else the gateway loads POLICY_FILE. */
  policy?: PolicyFile;
  /** Told of each model title the gateway asks, with its outcome (tests await it). */
  onModelTitle?: GatewayOptions['onModelTitle'];
}

export async function buildApp({ config, roles, pool, databaseUrl, policy, onModelTitle }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: loggerOptions(config.logLevel, { serializers: { req: serializeRequest } }),
    bodyLimit: config.bodyMaxBytes,
    // Only these peers' X-Forwarded-For/-Host/-Proto count (request.ip, .host, .protocol); anyone
    // else's are the client's own words (login throttling and Gradio's root depend on this).
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    // Requests carry an id that errors quote as their correlation id.
    genReqId: () => crypto.randomUUID(),
  });
  registerErrorHandler(app);
  registerServerTiming(app);
  const markDrainedLast = closeConnectionsOnStop(app, config.shutdownGraceMs);
  await registerSecurityHeaders(app);

  // The gateway calls the api over HTTP; in one process that is this server's own address.
  const apiUrl = () => config.apiUrl ?? localUrl(app);

  if (roles.includes('api')) {
    if (!pool) throw new Error('the api role needs a database pool');
    // Signed audit heads go out through the webhooks only when an endpoint names audit.checkpoint.
    const checkpointWebhooks = anyEndpointNames(await loadWebhooks(config.approvalWebhooks), 'audit.checkpoint');
    await app.register(apiRoutes, { config, pool, checkpointWebhooks });
  }
  if (roles.includes('gateway')) {
    if (!pool || !databaseUrl) throw new Error('the gateway role needs a database');
    await app.register(gatewayRoutes, { config, pool, databaseUrl, apiUrl, policy, onModelTitle });
  }
  // Each process's own Prometheus metrics at the root (service token), wherever there is a database to verify it.
  if (pool && (roles.includes('api') || roles.includes('gateway'))) {
    await app.register(prometheusRoute, { verifiers: { verifyUser: createUserTokenVerifier({ pool, config }), verifyService: createServiceTokenVerifier({ pool, config }) } });
  }
  if (roles.includes('web')) await app.register(webRoutes);
  else {
    app.setNotFoundHandler((request, reply) =>
      reply.status(404).send({ error: { code: 'NOT_FOUND', message: `No route ${request.method} ${request.url.split('?')[0]}` } }),
    );
  }
  await markDrainedLast();
  return app;
}

/**
 * While closing, each connection is closed as soon as it is idle; once every drain is done and the
 * grace is over, whatever is still open is cut. Node's server.close() closes only the connections
 * idle when it is called: one whose response ends later (a stream the shutdown ended, a slow
 * request) stays kept alive and holds the close until the keep-alive timeout (72 s), and one whose
 * request never ends (a stalled upload) holds it for ever: past main's forced exit either way.
 * Fastify already answers requests that arrive meanwhile with `Connection: close`; a timer, not a
 * per-request listener, keeps the hot path as it is. Returns the registration of the "drained"
 * mark, to be called after every other plugin (its preClose then runs last).
 */
function closeConnectionsOnStop(app: FastifyInstance, graceMs: number, everyMs = 50): () => PromiseLike<unknown> {
  let timer: NodeJS.Timeout | undefined;
  let drained = false;
  let cutAt = Infinity;
  app.addHook('preClose', async () => {
    cutAt = Date.now() + graceMs;
    timer = setInterval(() => {
      // Not before the drains are done: a stream's terminal frame may still be on its way.
      if (drained && Date.now() >= cutAt) app.server.closeAllConnections();
      else app.server.closeIdleConnections();
    }, everyMs).unref();
  });
  app.addHook('onClose', async () => clearInterval(timer));
  return () => app.register(async (last) => last.addHook('preClose', async () => void (drained = true)));
}

/** The address this server listens on, as a URL a local client can use. */
export function localUrl(app: FastifyInstance): string {
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('the server is not listening yet');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host;
  return `http://${reachable}:${address.port}`;
}
