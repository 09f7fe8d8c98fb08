/**
 * Starts the real app (chosen roles) on a free loopback port with a test config.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, localUrl } from '../../server/app.ts';
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
}): Promise<TestServer> {
  const config = options.config ?? testConfig(options.env);
  const app = await buildApp({
    config,
    roles: options.roles ?? ['api', 'gateway'],
    pool: options.db.pool,
    databaseUrl: options.db.url,
  });
  await app.listen({ host: config.host, port: config.port });
  return { app, url: localUrl(app), config, close: () => app.close() };
}
