/**
 * `GET /config`, `GET /gradio_api/info`, `GET /gradio_api/app_id` (each also with a trailing slash).
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { buildConfig } from '../config-builder.ts';
import type { GradioContext } from '../context.ts';
import { buildInfo } from '../info.ts';
import { computeRoot } from '../root-url.ts';

/** Registers the metadata routes. */
export function registerMetaRoutes(app: FastifyInstance, ctx: GradioContext): void {
  const info = buildInfo(ctx.endpoints);
  const allInfo = buildInfo(ctx.endpoints, true);
  const config = async (request: import('fastify').FastifyRequest) => {
    // request.host/.protocol honour X-Forwarded-* only from the app's trustProxy peers.
    const root = computeRoot({
      host: request.host,
      protocol: request.protocol,
      mountPath: ctx.mountPath,
      publicUrl: ctx.options.publicUrl,
    });
    return buildConfig(ctx.endpoints, {
      root,
      title: ctx.options.title ?? 'Gradio',
      appId: ctx.appId,
      connectHeartbeat: ctx.options.connectHeartbeat ?? false,
      maxFileSize: ctx.options.uploadMaxBytes,
    });
  };
  for (const path of ['/config', '/config/']) app.get(path, config);
  // Upstream treats any non-empty all_endpoints value as true.
  const infoRoute = async (request: import('fastify').FastifyRequest) => ((request.query as Record<string, unknown>).all_endpoints ? allInfo : info);
  for (const path of ['/gradio_api/info', '/gradio_api/info/']) app.get(path, infoRoute);
  app.get('/gradio_api/app_id', async () => ({ app_id: ctx.appId }));
}
