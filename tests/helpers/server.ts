/**
 * Starts the real app (chosen roles) on a free loopback port with a test config.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, localUrl, type AppOptions } from '../../server/app.ts';
import { loadConfig, type Config, type Role } from '../../server/config.ts';
import type { TestDatabase } from './database.ts';

export interface TestServer {
  app: FastifyInstance;
  url: string;
  config: Config;
  close(): Promise<void>;
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    // Tests log in as the demo users; with DATABASE_URL set they are off unless asked for.
    DEMO_USERS: 'true',
    DEMO_PASSWORD: 'demo-password-1',
    SERVICE_CLIENT_SECRET: 'test-service-secret-0123456789',
    OFFLINE_MODEL_DELAY_MS: '0',
    DATA_DIR: join(tmpdir(), `airlock-test-${process.pid}`),
    ...env,
  });
}

export async function startTestServer(options: {
  db: TestDatabase;
  roles?: Role[];
  config?: Config;
  env?: Record<string, string>;
  /** With a TOOLS_FILE: wait (default) until every MCP server's first connect has ended, as the start no longer does. */
  waitForTools?: boolean;
  /** Told of each model title the gateway asks (a real model), with its outcome. */
  onModelTitle?: AppOptions['onModelTitle'];
}): Promise<TestServer> {
  const config = options.config ?? testConfig(options.env);
  const app = await buildApp({
    config,
    roles: options.roles ?? ['api', 'gateway'],
    pool: options.db.pool,
    databaseUrl: options.db.url,
    onModelTitle: options.onModelTitle,
  });
  await app.listen({ host: config.host, port: config.port });
  const url = localUrl(app);
  if (config.tools.file && options.waitForTools !== false && (options.roles ?? ['api', 'gateway']).includes('gateway')) await toolsSettled(url);
  return { app, url, config, close: () => app.close() };
}

/** Polls the tools status (as the demo admin) until no MCP server is still `connecting` (at most 30 s). */
/** The admin's headers on `url` (the tools status route is the admin's); none when demo users are off. */
async function adminHeaders(url: string): Promise<Record<string, string>> {
  const login = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'demo-password-1' }),
  });
  return login.ok ? { authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}` } : {};
}

/** `GET /api/agent/tools/servers` as the demo admin. */
export async function toolServers(url: string): Promise<any> {
  return (await fetch(`${url}/api/agent/tools/servers`, { headers: await adminHeaders(url) })).json();
}

async function toolsSettled(url: string): Promise<void> {
  const headers = await adminHeaders(url);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const res = await fetch(`${url}/api/agent/tools/servers`, { headers });
    const body = res.ok ? ((await res.json()) as { servers: Array<{ status: string }> }) : { servers: [] };
    if (!body.servers.some((s) => s.status === 'connecting')) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
