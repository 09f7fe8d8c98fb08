/**
 * The gateway (api + gateway roles, as `./airlock start` runs them) and the reference pipeline in
 * one child process, both on the model at argv[2], so the parent (the clients) is not counted in
 * their CPU. With BENCH_API_PROCESS=1 the api role runs in a process of its own (bench/api-process.ts),
 * as deployed behind nginx. Sends {base, ref, token} when ready; answers {cpu} (process.cpuUsage()
 * µs), {rss}, {queries} (sent so far), and profile-start / profile-stop (a CPU profile between them).
 */
import { Session } from 'node:inspector/promises';
import { buildApp, localUrl } from '../server/app.ts';
import { BENCH_PASSWORD, benchConfig } from './bench-config.ts';
import { startChild } from './children.ts';
import { openBenchDatabase } from './support.ts';
import { startReference } from './reference.ts';
import { countQueries, traceSql } from './trace-sql.ts';

if (process.env.BENCH_TRACE_SQL) traceSql();
const queries = countQueries();
const modelUrl = process.argv[2];
const db = await openBenchDatabase();
const api = process.env.BENCH_API_PROCESS ? await startChild<{ url: string }>('./api-process.ts', [db.url, modelUrl]) : null;
const config = benchConfig(modelUrl, api ? { API_URL: api.ready.url } : {});
const app = await buildApp({ config, roles: api ? ['gateway'] : ['api', 'gateway'], pool: db.pool, databaseUrl: db.url });
await app.listen({ host: '127.0.0.1', port: 0 });
const base = localUrl(app);
const reference = await startReference(modelUrl, db.url);
const login = await fetch(`${api?.ready.url ?? base}/api/auth/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ username: 'admin', password: BENCH_PASSWORD }),
});
const { access_token: token } = (await login.json()) as { access_token: string };
process.send!({ base: `${base}/api/agent/gradio`, ref: reference.url, token });
const profiler = new Session();
profiler.connect();
process.on('message', async (m: { cmd: string }) => {
  if (m.cmd === 'cpu') process.send!({ cpu: process.cpuUsage() });
  if (m.cmd === 'rss') process.send!({ rss: process.memoryUsage().rss });
  if (m.cmd === 'queries') process.send!({ queries: queries() });
  // A CPU profile of exactly what runs between the two commands (bench/turn-profile.ts).
  if (m.cmd === 'profile-start') {
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
    process.send!({ profiling: true });
  }
  if (m.cmd === 'profile-stop') process.send!({ profile: (await profiler.post('Profiler.stop')).profile });
});
process.on('disconnect', async () => {
  await reference.close();
  await app.close();
  if (api) {
    api.stop();
    await new Promise((r) => api.proc.once('exit', r));
  }
  await db.close();
  process.exit(0);
});
