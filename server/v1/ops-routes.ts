/**
 * Operations under `/api/agent/v1` (seed 000): `GET /health` (public liveness with the contract
 * version), `GET /ready` (service token: database, model endpoint, tools, MCP servers, each with its
 * status; 503 while the database or the model is not usable) and `GET /metrics` (service token:
 * the fastreact.metrics.v1 summary from the shared database).
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import type { McpSourceStatus } from '../agent/index.ts';
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
  /** Names of the tools the agent can run now: built-in, and from MCP servers. */
  toolNames: () => { builtin: string[]; mcp: string[] };
  /** The MCP servers and their health (TOOLS_FILE). */
  mcpStatus: () => McpSourceStatus;
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
    const mcp = options.mcpStatus();
    const servers = mcp.servers.map((s) => ({ name: s.name, transport: s.transport, alive: s.status === 'up', status: s.status, tools: s.tools, last_error: s.last_error }));
    const tools = options.toolNames();
    const count = tools.builtin.length + tools.mcp.length;
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
      tools: { status: count > 0 ? 'up' : 'down', count, builtin: tools.builtin, mcp: tools.mcp },
      // A down MCP server leaves its tools out and is retried; it does not make the gateway unready.
      mcp: { ready: servers.every((s) => s.alive) && !mcp.file_error, file: mcp.file, file_error: mcp.file_error, servers, tools: tools.mcp },
    };
  });

  app.get('/metrics', async (request) => {
    await authenticateCaller(request, verifiers, { serviceOnly: true });
    return metricsSummary(pool);
  });
};
