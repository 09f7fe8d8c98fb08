/**
 * The gateway (api + gateway roles) and the reference pipeline in one child process, both on the
 * model at argv[2], so the parent (the clients) is not counted in their CPU. Sends {base, ref,
 * token} when ready; answers {cpu} (process.cpuUsage() µs), {rss} and {queries} (sent so far).
 */
import { buildApp, localUrl } from '../server/app.ts';
import { loadConfig } from '../server/config.ts';
import { openBenchDatabase } from './support.ts';
import { startReference } from './reference.ts';
import { countQueries, traceSql } from './trace-sql.ts';

if (process.env.BENCH_TRACE_SQL) traceSql();
const queries = countQueries();
const PASSWORD = 'bench-password-1';
const modelUrl = process.argv[2];
const db = await openBenchDatabase();
const config = loadConfig({
  HOST: '127.0.0.1',
  PORT: '0',
  LOG_LEVEL: 'silent',
  DEMO_PASSWORD: PASSWORD,
  SERVICE_CLIENT_SECRET: 'bench-service-secret-0123456789',
  OPENAI_BASE_URL: modelUrl,
  CHAT_USER_CONCURRENCY: '10000',
  CHAT_USER_QUEUE: '10000',
  ...(process.env.BENCH_CHAT_CONCURRENCY ? { CHAT_CONCURRENCY: process.env.BENCH_CHAT_CONCURRENCY } : {}),
  // A tool policy in the path (server/policy): POLICY_FILE=… npm run bench -- chat
  ...(process.env.POLICY_FILE ? { POLICY_FILE: process.env.POLICY_FILE } : {}),
});
const app = await buildApp({ config, roles: ['api', 'gateway'], pool: db.pool, databaseUrl: db.url });
await app.listen({ host: '127.0.0.1', port: 0 });
const base = localUrl(app);
const reference = await startReference(modelUrl, db.url);
const login = await fetch(`${base}/api/auth/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ username: 'admin', password: PASSWORD }),
});
const { access_token: token } = (await login.json()) as { access_token: string };
process.send!({ base: `${base}/api/agent/gradio`, ref: reference.url, token });
process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'cpu') process.send!({ cpu: process.cpuUsage() });
  if (m.cmd === 'rss') process.send!({ rss: process.memoryUsage().rss });
  if (m.cmd === 'queries') process.send!({ queries: queries() });
});
process.on('disconnect', async () => {
  await reference.close();
  await app.close();
  await db.close();
  process.exit(0);
});
