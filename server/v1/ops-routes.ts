/**
 * Operations under `/api/agent/v1` (seed 000): `GET /health` (public liveness with the contract
 * version), `GET /ready` (service token: database, model endpoint, tools, and each tool source's own
 * status; 503 while the database or the model is not usable) and `GET /metrics` (service token:
 * the fastreact.metrics.v1 summary from the shared database).
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { deliveryCounts } from '../db/approval-outbox.ts';
import type { ToolSource } from '../agent/index.ts';
import type { Queryable } from '../db/index.ts';
import { metricsSummary } from '../metrics/index.ts';
import { authenticateCaller, type Verifiers } from './caller.ts';
import { useV1ErrorBodies } from './errors.ts';

export const SERVICE_CONTRACT = 'fastreact.agent_event.v1';
export const CONTRACT_VERSION = 'v1';

export interface OpsRouteOptions {
  pool: Queryable;
  verifiers: Verifiers;
  model: { name: string; baseUrl: string; apiKey: string; offline: boolean };
  /** Where the agent's tools come from: each source's tools under its kind, and its own readiness block. */
  toolSources: readonly ToolSource[];
  /** Timeout of each readiness probe. */
  probeTimeoutMs?: number;
  fetch?: typeof fetch;
}

interface Probe {
  status: 'up' | 'down';
  latency_ms: number;
  error?: string;
}

/** Runs one probe with a deadline; never throws. */
async function probe(timeoutMs: number, check: (signal: AbortSignal) => Promise<void>): Promise<Probe> {
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    await Promise.race([
      check(signal),
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error(`no answer within ${timeoutMs} ms`)), { once: true })),
    ]);
    return { status: 'up', latency_ms: Math.round(performance.now() - started) };
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).split('\n')[0].slice(0, 200);
    return { status: 'down', latency_ms: Math.round(performance.now() - started), error: message };
  }
}

export const opsRoutes: FastifyPluginAsync<OpsRouteOptions> = async (app, options) => {
  useV1ErrorBodies(app);
  const { pool, verifiers, model } = options;
  const timeoutMs = options.probeTimeoutMs ?? 3_000;
  const doFetch = options.fetch ?? fetch;

  app.get('/health', async () => ({ status: 'ok', service_contract: SERVICE_CONTRACT, contract_version: CONTRACT_VERSION, agent_ready: true }));

  app.get('/ready', async (request, reply) => {
    await authenticateCaller(request, verifiers, { serviceOnly: true });
    const [database, modelProbe] = await Promise.all([
      probe(timeoutMs, async () => void (await pool.query('SELECT 1'))),
      // The OpenAI-compatible model list: cheap, authenticated, spends no tokens.
      probe(timeoutMs, async (signal) => {
        const response = await doFetch(`${model.baseUrl}/models`, { headers: { authorization: `Bearer ${model.apiKey}` }, signal });
        await response.body?.cancel();
        if (!response.ok) throw new Error(`the model endpoint answered HTTP ${response.status}`);
      }),
    ]);
    const sources = options.toolSources.map((s) => s.status());
    const count = sources.reduce((n, s) => n + s.tools.length, 0);
    const ready = database.status === 'up' && modelProbe.status === 'up';
    reply.status(ready ? 200 : 503);
    return {
      ready,
      agent_ready: true,
      service_contract: SERVICE_CONTRACT,
      contract_version: CONTRACT_VERSION,
      auth: { required: true },
      database,
      model: { name: model.name, offline: model.offline, api_base_configured: !model.offline, api_key_configured: !model.offline && model.apiKey !== 'offline', ...modelProbe },
      tools: { status: count > 0 ? 'up' : 'down', count, ...Object.fromEntries(sources.map((s) => [s.kind, s.tools])) },
      // A source's own block (the MCP servers' health): a source that is down does not make the gateway unready.
      ...Object.fromEntries(sources.flatMap((s) => (s.readiness ? [[s.kind, s.readiness]] : []))),
    };
  });

  app.get('/metrics', async (request) => {
    await authenticateCaller(request, verifiers, { serviceOnly: true });
    // Approval webhook deliveries by status (issue 26), from the shared outbox.
    return { ...(await metricsSummary(pool)), webhooks: await deliveryCounts(pool) };
  });
};
