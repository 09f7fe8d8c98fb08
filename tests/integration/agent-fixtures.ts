/**
 * Fixtures for the agent integration tests: the offline model served over HTTP, a tiny fake backend
 * (CONTRACTS §2 tool endpoints, roles by user token), and an event collector.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { localUrl } from '../../server/app.ts';
import { offlineModelRoutes } from '../../server/agent/index.ts';
import type { AgentEvent } from '../../server/agent/index.ts';

export const SERVICE_SECRET = 'test-service-secret-0123456789';

/** Starts the offline model on a free port; `baseUrl` ends with `/v1`. `offered` logs the tool names of each chat request. */
export async function startOfflineModel(delayMs = 0): Promise<{ app: FastifyInstance; baseUrl: string; offered: string[][] }> {
  const offered: string[][] = [];
  const app = Fastify({ logger: false });
  app.addHook('preHandler', async (req) => {
    if (!req.url.endsWith('/chat/completions')) return;
    const tools = (req.body as { tools?: Array<{ function: { name: string } }> }).tools ?? [];
    offered.push(tools.map((t) => t.function.name));
  });
  await app.register(offlineModelRoutes, { prefix: '/api/offline-model', delayMs });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, baseUrl: `${localUrl(app)}/api/offline-model/v1`, offered };
}

export interface BackendCall {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  headers: Record<string, string | undefined>;
}

const PERMISSIONS: Record<string, string[]> = {
  viewer: ['dashboards:read', 'maintenance:read', 'deployments:read', 'health:read', 'environment:read', 'tasks:read'],
  operator: [],
  admin: [],
};
PERMISSIONS.operator = [...PERMISSIONS.viewer, 'maintenance:write', 'tasks:write'];
PERMISSIONS.admin = [...PERMISSIONS.operator, 'deployments:write'];

const TOOL_PERMISSION: Record<string, string> = {
  show_capabilities: '', search_dashboards: 'dashboards:read', get_dashboard: 'dashboards:read',
  list_maintenance_events: 'maintenance:read', start_maintenance: 'maintenance:write', end_maintenance: 'maintenance:write',
  list_deployments: 'deployments:read', deploy_service: 'deployments:write', check_health: 'health:read',
  get_environment: 'environment:read', create_task: 'tasks:write',
};

/** A fake backend: user tokens are `user-<role>`, the service token is handed out for SERVICE_SECRET. */
export async function startFakeBackend(options: { failHealth?: boolean; healthDelayMs?: number } = {}) {
  const calls: BackendCall[] = [];
  const idempotent = new Map<string, unknown>();
  let serviceTokensIssued = 0;
  const app = Fastify({ logger: false });

  app.post('/api/auth/service-token', async (req, reply) => {
    const body = req.body as { client_id?: string; client_secret?: string };
    if (body.client_secret !== SERVICE_SECRET) return reply.status(401).send({ error: { code: 'UNAUTHORIZED', message: 'bad credentials' } });
    serviceTokensIssued++;
    return { access_token: `svc-${serviceTokensIssued}`, token_type: 'Bearer', expires_in: 300 };
  });

  app.addHook('preHandler', async (req, reply) => {
    if (!req.url.startsWith('/api/tools/')) return;
    const [path, qs] = req.url.split('?');
    calls.push({
      method: req.method, path, query: Object.fromEntries(new URLSearchParams(qs ?? '')), body: req.body,
      headers: {
        authorization: req.headers.authorization, 'x-user-jwt': req.headers['x-user-jwt'] as string | undefined,
        'idempotency-key': req.headers['idempotency-key'] as string | undefined,
        'x-tool-call-id': req.headers['x-tool-call-id'] as string | undefined,
        'x-conversation-id': req.headers['x-conversation-id'] as string | undefined,
      },
    });
    if (!req.headers.authorization?.startsWith('Bearer svc-')) return reply.status(401).send({ error: { code: 'UNAUTHORIZED', message: 'service token required' } });
    const role = String(req.headers['x-user-jwt'] ?? '').replace(/^user-/, '');
    if (!PERMISSIONS[role]) return reply.status(401).send({ error: { code: 'UNAUTHORIZED', message: 'user token invalid' } });
    (req as unknown as { role: string }).role = role;
  });

  const allowed = (req: unknown, tool: string) => {
    const perm = TOOL_PERMISSION[tool];
    return perm === '' || PERMISSIONS[(req as { role: string }).role].includes(perm);
  };
  const guard = (tool: string) => async (req: unknown, reply: { status(n: number): { send(b: unknown): unknown } }) => {
    if (!allowed(req, tool)) return reply.status(403).send({ error: { code: 'FORBIDDEN', message: `missing ${TOOL_PERMISSION[tool]}`, details: { permission: TOOL_PERMISSION[tool] } } });
  };
  const once = (key: string | undefined, make: () => unknown) => {
    if (!key) return make();
    if (!idempotent.has(key)) idempotent.set(key, make());
    return idempotent.get(key);
  };

  app.get('/api/tools/capabilities', async (req) => {
    const role = (req as unknown as { role: string }).role;
    return {
      user: { id: `u-${role}`, username: role, role }, permissions: PERMISSIONS[role],
      tools: Object.keys(TOOL_PERMISSION).map((name) => ({ name, allowed: allowed(req, name), description: name.replace(/_/g, ' ') })),
    };
  });
  app.get('/api/tools/dashboards', { preHandler: guard('search_dashboards') }, async (req) => {
    const q = String((req.query as { q?: string }).q ?? '');
    const all = [{ id: 'dash-latency', title: 'API latency', service: 'payments-api' }, { id: 'dash-errors', title: 'Error rates', service: 'checkout-api' }];
    return { items: all.filter((d) => d.title.toLowerCase().includes(q.toLowerCase())) };
  });
  app.get('/api/tools/health', { preHandler: guard('check_health') }, async (req, reply) => {
    if (options.healthDelayMs) await new Promise((r) => setTimeout(r, options.healthDelayMs));
    if (options.failHealth) return reply.status(503).send({ error: { code: 'INTERNAL', message: 'health store down' } });
    const service = (req.query as { service?: string }).service ?? 'payments-api';
    return { service, status: 'healthy', latency_ms: 42 };
  });
  app.get('/api/tools/maintenance', { preHandler: guard('list_maintenance_events') }, async () => ({
    items: [{ id: 'm-1', service: 'db-primary', status: 'upcoming', reason: 'kernel patch' }],
  }));
  app.post('/api/tools/maintenance', { preHandler: guard('start_maintenance') }, async (req) =>
    once(req.headers['idempotency-key'] as string, () => ({ id: `m-${calls.length}`, ...(req.body as object), status: 'active' })),
  );
  app.post('/api/tools/maintenance/end', { preHandler: guard('end_maintenance') }, async (req) =>
    once(req.headers['idempotency-key'] as string, () => ({ ...(req.body as object), status: 'ended' })),
  );
  app.post('/api/tools/deployments', { preHandler: guard('deploy_service') }, async (req) =>
    once(req.headers['idempotency-key'] as string, () => ({ id: `d-${calls.length}`, ...(req.body as object), status: 'in_progress' })),
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    app, url: localUrl(app), calls,
    /** Calls that changed something (POSTs), de-duplicated by idempotency key. */
    effects: () => [...idempotent.keys()],
    serviceTokensIssued: () => serviceTokensIssued,
  };
}

/** Drains an event stream into an array. */
export async function collect(events: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** The event types, in order, with consecutive tokens folded into one `token`. */
export function shape(events: AgentEvent[]): string[] {
  return events.map((e) => e.type).filter((t, i, all) => !(t === 'token' && all[i - 1] === 'token'));
}
