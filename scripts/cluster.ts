/**
 * `npm run cluster -- --replicas 3 [--port 8080]`: N gateway replicas (REPLICAS=true) and one
 * api + web process behind the real nginx (plain round-robin), all on this machine and one
 * PostgreSQL: DATABASE_URL when set, else an embedded one under ./data/cluster-postgres. Prints
 * the URL and each replica's port and pid; Ctrl-C stops everything. See README "Running several
 * replicas" (kill a replica with `kill -9 <pid>` mid-answer and watch the others carry on).
 */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedPostgres } from '../server/db/index.ts';
import { startCluster } from '../tests/helpers/cluster.ts';

const { values } = parseArgs({ options: { replicas: { type: 'string', default: '3' }, port: { type: 'string' } } });
const replicas = Number(values.replicas);
if (!Number.isInteger(replicas) || replicas < 1 || replicas > 16) {
  process.stderr.write('--replicas must be an integer from 1 to 16\n');
  process.exit(2);
}
const port = values.port === undefined ? 8080 : Number(values.port);

const embedded = process.env.DATABASE_URL ? undefined : await startEmbeddedPostgres(join(resolve(process.env.DATA_DIR ?? 'data'), 'cluster-postgres'));
const databaseUrl = process.env.DATABASE_URL ?? embedded!.url;
const cluster = await startCluster({
  replicas,
  databaseUrl,
  port,
  apiRoles: 'api,web',
  env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', DEMO_USERS: process.env.DEMO_USERS ?? 'true' },
});
process.stdout.write(`Airlock: ${replicas} gateway replica(s) behind nginx at ${cluster.url}\n`);
cluster.replicas.forEach((r, i) => process.stdout.write(`  replica ${i}: port ${cluster.ports[i]}, pid ${r.child.pid}\n`));
process.stdout.write(`  api + web: ${cluster.api.url}, pid ${cluster.api.child.pid}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await cluster.stop();
  await embedded?.stop();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
