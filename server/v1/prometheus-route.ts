/**
 * `GET /metrics` at the root of each process (the Prometheus convention): this process's registry
 * in the Prometheus text format. The service token is required: run counts and tool names are
 * operational data, not public.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { authenticateCaller, type Verifiers } from './caller.ts';
import { processMetrics } from '../metrics/registry.ts';

export const prometheusRoute: FastifyPluginAsync<{ verifiers: Verifiers }> = async (app, { verifiers }) => {
  app.get('/metrics', async (request, reply) => {
    await authenticateCaller(request, verifiers, { serviceOnly: true });
    const { registry } = processMetrics();
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
};
