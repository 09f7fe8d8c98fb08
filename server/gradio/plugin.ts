/**
 * `gradioPlugin`: a Gradio sse_v3 server as an encapsulated Fastify plugin, mounted under any
 * prefix. Gradio-shaped errors (`{detail}`) stay inside it; the root app's handler is untouched.
 * @module
 */
import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance } from 'fastify';
import { createAuthHook } from './auth.ts';
import { cookieName } from './cookie-session.ts';
import type { GradioContext } from './context.ts';
import { registerCors } from './cors.ts';
import { isGradioError, pythonValidationBody } from './errors.ts';
import { DirectRuns } from './direct-runs.ts';
import { GradioQueue } from './queue.ts';
import { registerCallRoutes } from './routes/call.ts';
import { registerControlRoutes } from './routes/control.ts';
import { registerFileRoutes } from './routes/files.ts';
import { registerLoginRoutes } from './routes/login.ts';
import { registerMcpRoutes } from './routes/mcp.ts';
import { registerMetaRoutes } from './routes/meta.ts';
import { registerQueueRoutes } from './routes/queue.ts';
import { registerRunRoutes } from './routes/run.ts';
import { createMemorySessionBus } from './bus/memory-bus.ts';
import { isPythonClient, StreamHub } from './streams.ts';
import { startUploadSweep } from './upload-sweep.ts';
import { UploadStore } from './upload-store.ts';
import type { GradioPluginOptions } from './types.ts';
import { isMalformedMultipart } from './malformed-body.ts';

function checkOptions(options: GradioPluginOptions<any>): void {
  if (!Array.isArray(options.endpoints) || options.endpoints.length === 0) throw new TypeError('gradioPlugin: endpoints must be a non-empty array');
  const names = new Set<string>();
  for (const e of options.endpoints) {
    if (!/^[A-Za-z0-9_\-]+$/.test(e.apiName)) throw new TypeError(`gradioPlugin: invalid apiName "${e.apiName}"`);
    if (names.has(e.apiName)) throw new TypeError(`gradioPlugin: duplicate apiName "${e.apiName}"`);
    names.add(e.apiName);
    if (typeof e.handler !== 'function') throw new TypeError(`gradioPlugin: endpoint "${e.apiName}" has no handler`);
  }
  if (typeof options.authenticate !== 'function') throw new TypeError('gradioPlugin: authenticate must be a function');
  if (options.login !== undefined && typeof options.login !== 'function') throw new TypeError('gradioPlugin: login must be a function');
  if (!options.dataDir) throw new TypeError('gradioPlugin: dataDir is required');
  if (!(options.uploadMaxBytes > 0)) throw new TypeError('gradioPlugin: uploadMaxBytes must be positive');
}

/**
 * Registers the Gradio routes under the register prefix.
 * @example
 * await app.register(gradioPlugin, { prefix: '/api/agent/gradio', endpoints, authenticate, dataDir, uploadMaxBytes });
 */
export async function gradioPlugin(app: FastifyInstance, options: GradioPluginOptions<any>): Promise<void> {
  checkOptions(options);
  const queue = new GradioQueue(options.endpoints, {
    bus: options.bus ?? createMemorySessionBus(),
    orphanTimeoutMs: options.orphanTimeoutMs ?? 60_000,
    log: app.log,
  });
  const ctx: GradioContext = {
    options,
    endpoints: options.endpoints,
    queue,
    direct: new DirectRuns(queue),
    streams: new StreamHub(queue, options.heartbeatMs ?? 15_000, options.heartbeatsPerIdentity ?? 8),
    store:
      options.uploadStore ??
      new UploadStore(options.dataDir, {
        requestMaxBytes: options.uploadRequestMaxBytes ?? options.uploadMaxBytes * 4,
        quotaBytes: options.uploadQuotaBytes ?? Infinity,
      }),
    appId: Math.floor(Math.random() * 2 ** 52),
    mountPath: options.rootPath ?? app.prefix,
  };

  const bodyLimit = options.bodyLimit ?? 1024 * 1024;
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= bodyLimit;
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // Refused before the body was read (an upload past a limit or a full disk): the rest of the
    // body is still on the wire, so this connection cannot carry the client's next request.
    if (!request.raw.complete) reply.header('connection', 'close');
    if (isGradioError(error)) {
      const detail = (error.body as { detail?: unknown }).detail;
      if (error.status === 422 && typeof detail === 'string' && isPythonClient(request.headers['user-agent'])) {
        return reply.status(422).send(pythonValidationBody(detail, (error as { parameter?: string }).parameter));
      }
      if ('retryAfterS' in error) reply.header('retry-after', String(error.retryAfterS));
      return reply.status(error.status).send(error.body);
    }
    const status = error.statusCode ?? (isMalformedMultipart(error) ? 400 : 500);
    if (status === 413) return reply.status(413).send({ detail: error.message || 'Request body too large.' });
    if (status >= 400 && status < 500) return reply.status(status).send({ detail: error.message });
    request.log.error({ err: error }, 'gradio route failed');
    return reply.status(500).send({ detail: 'Internal server error.' });
  });
  await app.register(multipart, {
    limits: { fileSize: options.uploadMaxBytes, files: 100, fields: 100, parts: 200, fieldSize: 64 * 1024 },
  });
  // /login's Python client posts form-urlencoded; parsed here, in this plugin's scope only.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  // Unknown routes under the prefix answer as FastAPI does, not with the root app's shape.
  app.setNotFoundHandler((_request, reply) => reply.status(404).send({ detail: 'Not Found' }));
  if (options.cors) registerCors(app);
  // Replies sent while closing (stopped /run calls) end their keep-alive connection, which would
  // otherwise hold server.close() until the keep-alive timeout.
  app.addHook('onSend', async (_request, reply) => {
    if (queue.closing) reply.header('Connection', 'close');
  });
  app.addHook('onRequest', createAuthHook(options.authenticate, options.login ? cookieName(ctx.mountPath) : undefined));

  registerMetaRoutes(app, ctx);
  registerQueueRoutes(app, ctx);
  registerControlRoutes(app, ctx);
  registerFileRoutes(app, ctx);
  registerRunRoutes(app, ctx);
  registerCallRoutes(app, ctx);
  registerLoginRoutes(app, ctx);
  registerMcpRoutes(app, ctx);

  const sweep = startUploadSweep(ctx.store, options, app.log);
  app.addHook('onClose', async () => sweep.stop());

  // Shutdown: refuse joins, give running events `drainMs`, end the rest with an error completion,
  // then close every stream (session streams with close_stream) so server.close() can finish.
  app.addHook('preClose', async () => {
    const deadline = Date.now() + (options.drainMs ?? 0);
    await queue.shutdown(options.drainMs ?? 0);
    // Streams here may wait for events that run on other replicas: give them the same drain.
    await ctx.streams.drained(deadline);
    ctx.direct.stopAll();
    ctx.streams.closeAll();
    await queue.bus.flush();
  });
}
