/**
 * api bench: login + tool-call round-trip latency, and requests/s of a read tool endpoint with
 * both tokens verified (plus the revocation check and the audit row each call writes).
 * Real server (api role) on a fresh schema; DATABASE_URL when set, else an embedded PostgreSQL.
 *
 *   npm run bench -- api            (BENCH_SECONDS, BENCH_CONCURRENCY to tune)
 */
import { buildApp, localUrl } from '../server/app.ts';
import { loadConfig } from '../server/config.ts';
import { openBenchDatabase, percentile } from './support.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const ROUND_TRIPS = Number(process.env.BENCH_ROUND_TRIPS ?? 20);

const ms = (n: number) => `${n.toFixed(2)} ms`;
function summary(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p95: percentile(s, 95), p99: percentile(s, 99), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

async function main(): Promise<void> {
  const database = await openBenchDatabase();
  const pool = database.pool;
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    DEMO_PASSWORD: 'bench-password-1',
    SERVICE_CLIENT_SECRET: 'bench-service-secret-0123456789',
  });
  const app = await buildApp({ config, roles: ['api'], pool });
  await app.listen({ host: config.host, port: 0 });
  const base = localUrl(app);

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const json = (await res.json()) as Record<string, any>;
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const service = (await post('/api/auth/service-token', { client_id: config.service.clientId, client_secret: config.service.clientSecret }))
    .access_token as string;
  const call = async (user: string, path: string) => {
    const res = await fetch(base + path, { headers: { authorization: `Bearer ${service}`, 'x-user-jwt': user } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  };

  // 1. Login + one tool call, sequentially (login is dominated by scrypt, deliberately slow).
  const login: number[] = [];
  const tool: number[] = [];
  const roundTrip: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const t0 = performance.now();
    const token = (await post('/api/auth/login', { username: 'operator', password: 'bench-password-1' }, { 'x-forwarded-for': `10.0.${i}.1` }))
      .access_token as string;
    const t1 = performance.now();
    await call(token, '/api/tools/health?service=payments-api');
    const t2 = performance.now();
    login.push(t1 - t0);
    tool.push(t2 - t1);
    roundTrip.push(t2 - t0);
  }

  // 2. Read tool endpoint under load: CONCURRENCY workers for SECONDS.
  const user = (await post('/api/auth/login', { username: 'viewer', password: 'bench-password-1' })).access_token as string;
  const path = process.env.BENCH_PATH ?? '/api/tools/dashboards/kafka-lag';
  for (let i = 0; i < 200; i++) await call(user, path); // warm up (JIT, key cache, pool)
  const latencies: number[] = [];
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const t = performance.now();
        await call(user, path);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const load = summary(latencies);

  const l = summary(login);
  const t = summary(tool);
  const r = summary(roundTrip);
  const results = {
    login: l,
    tool_call: t,
    login_plus_tool_call: r,
    read_endpoint: { path, concurrency: CONCURRENCY, seconds: Number(elapsed.toFixed(2)), requests: latencies.length, rps: latencies.length / elapsed, ...load },
  };
  process.stdout.write(
    [
      `login (scrypt N=16384)         p50 ${ms(l.p50)}  p95 ${ms(l.p95)}  (n=${ROUND_TRIPS})`,
      `tool call (dual JWT + audit)   p50 ${ms(t.p50)}  p95 ${ms(t.p95)}`,
      `login + tool call round trip   p50 ${ms(r.p50)}  p95 ${ms(r.p95)}`,
      `GET ${path}, ${CONCURRENCY} concurrent, ${elapsed.toFixed(1)} s: ${Math.round(results.read_endpoint.rps)} req/s` +
        `  p50 ${ms(load.p50)}  p99 ${ms(load.p99)}  (${latencies.length} requests)`,
      `JSON ${JSON.stringify(results)}`,
      '',
    ].join('\n'),
  );

  await app.close();
  await database.close();
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
