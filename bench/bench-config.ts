/**
 * The settings every bench server process runs with (the gateway, and the api when it runs in its
 * own process), so that a split stack's two halves agree on the secrets.
 */
import { loadConfig, type Config } from '../server/config.ts';

export const BENCH_PASSWORD = 'bench-password-1';

export function benchConfig(modelUrl: string, extra: Record<string, string> = {}): Config {
  return loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    DEMO_PASSWORD: BENCH_PASSWORD,
    SERVICE_CLIENT_SECRET: 'bench-service-secret-0123456789',
    OPENAI_BASE_URL: modelUrl,
    CHAT_USER_CONCURRENCY: '10000',
    CHAT_USER_QUEUE: '10000',
    ...(process.env.BENCH_CHAT_CONCURRENCY ? { CHAT_CONCURRENCY: process.env.BENCH_CHAT_CONCURRENCY } : {}),
    // A tool policy in the path (server/policy): POLICY_FILE=… npm run bench -- chat
    ...(process.env.POLICY_FILE ? { POLICY_FILE: process.env.POLICY_FILE } : {}),
    ...extra,
  });
}
