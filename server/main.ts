/**
 * Composition root: reads the config, opens the database (embedded when DATABASE_URL is unset),
 * applies migrations, starts the chosen roles on one port, and shuts down gracefully.
 *
 *   node --import tsx server/main.ts                 # web + api + gateway in one process
 *   node --import tsx server/main.ts --role gateway  # one role (repeat --role or use a comma list)
 * @module
 */
import type { FastifyBaseLogger } from 'fastify';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp, localUrl } from './app.ts';
import { ConfigError, loadConfig, ROLES, type Role } from './config.ts';
import { createPool, runMigrations, startEmbeddedPostgres, type EmbeddedDatabase, type Pool } from './db/index.ts';
import { livePeers } from './db/processes.ts';
import { loadToolPolicy } from './policy/index.ts';
import { describeStartFailure, type StartContext } from './start-failure.ts';
import { startTelemetry, stopTelemetry } from './telemetry/index.ts';

function parseRoles(argv: string[]): Role[] {
  const { values } = parseArgs({ args: argv, options: { role: { type: 'string', multiple: true } } });
  const requested = (values.role ?? []).flatMap((r) => r.split(',')).map((r) => r.trim()).filter(Boolean);
  if (requested.length === 0) return [...ROLES];
  for (const role of requested) {
    if (!(ROLES as readonly string[]).includes(role)) throw new ConfigError(`Unknown role "${role}"; expected one of ${ROLES.join(', ')}`);
  }
  return [...new Set(requested)] as Role[];
}

/** Fails with the listen error (EADDRINUSE, EACCES) when host:port cannot be bound now. */
function assertPortFree(host: string, port: number): Promise<void> {
  return new Promise((resolveFree, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolveFree()));
  });
}

/** Resources opened before "ready", closed again when the start fails. */
interface Opened {
  embedded?: EmbeddedDatabase;
  pool?: Pool;
}

/**
 * Without REPLICAS, a gateway keeps the Gradio session bus in memory: a second gateway on the same
 * database behind one address would answer "Session not found" to most requests. So a start that
 * finds another gateway alive on this database (its backend connected and heartbeating within the
 * lease TTL, db/processes.ts) stops with one line naming the setting.
 */
async function assertNoLivePeer(pool: Pool, leaseTtlS: number): Promise<void> {
  const [peer] = await livePeers(pool, { owner: '', withinS: leaseTtlS });
  if (peer) throw new ConfigError(`Another Airlock gateway (${peer.owner}) is running on this database; set REPLICAS=true to run several`);
}

/** The app's logger once it exists: where an uncaught exception is logged (see below). */
let appLog: FastifyBaseLogger | undefined;

/**
 * An exception nothing caught (or a rejection nothing handled: Node routes it here) leaves the
 * process in an unknown state, so it exits 1 for its supervisor to restart it, but first says why:
 * a fatal log record with the stack (what a log collector keeps; Node's own print is not one) and
 * the stack on stderr (also when LOG_LEVEL is silent). An embedded database is stopped by its
 * watchdog when this process is gone.
 */
process.on('uncaughtException', (error, origin) => {
  appLog?.fatal({ err: error, origin }, 'uncaught exception; exiting 1');
  process.stderr.write(`Airlock: uncaught exception (${origin}); exiting 1\n${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});

async function main(opened: Opened): Promise<void> {
  const roles = parseRoles(process.argv.slice(2));
  const config = loadConfig();
  const split = roles.length < ROLES.length;
  if (split && config.service.secretGenerated && roles.some((r) => r !== 'web')) {
    throw new ConfigError('SERVICE_CLIENT_SECRET must be set when roles run in separate processes');
  }

  // Before the database starts: a port in use or a bad policy file should fail in a second, not after initdb.
  if (config.port !== 0) await assertPortFree(config.host, config.port);
  const policy = roles.includes('gateway') ? await loadToolPolicy(config.policy.file) : undefined;
  const needsDatabase = roles.some((r) => r !== 'web');
  let databaseUrl = config.databaseUrl;
  if (needsDatabase && !databaseUrl) {
    opened.embedded = await startEmbeddedPostgres(join(config.dataDir, 'postgres'));
    databaseUrl = opened.embedded.url;
  }
  const pool = databaseUrl ? createPool(databaseUrl) : undefined;
  opened.pool = pool;
  if (pool) await runMigrations(pool);
  if (pool && roles.includes('gateway') && !config.replicas) await assertNoLivePeer(pool, config.leaseTtlS);

  // Traces only with OTEL_EXPORTER_OTLP_ENDPOINT set: the SDK is not even loaded otherwise.
  await startTelemetry(process.env);
  const app = await buildApp({ config, roles, pool, databaseUrl, policy });
  appLog = app.log;
  await app.listen({ host: config.host, port: config.port });
  const url = config.publicUrl ?? localUrl(app);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      process.stderr.write(`Airlock: the stop did not finish within SHUTDOWN_GRACE_MS + 5 s (${config.shutdownGraceMs + 5_000} ms); exiting 1\n`);
      process.exit(1);
    }, config.shutdownGraceMs + 5_000);
    force.unref();
    try {
      await app.close(); // stops accepting, ends open streams with a terminal message (preClose hooks)
      await stopTelemetry().catch((error) => app.log.warn({ err: error }, 'exporting the last spans failed'));
      await pool?.end();
      await opened.embedded?.stop();
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  // Said only once a stop is handled: a supervisor (or a test) that stops the process as soon as it
  // reads this line must meet the graceful stop, not the signal's default (an exit with no cleanup).
  process.stdout.write(`Airlock (${roles.join(', ')}) is ready at ${url}\n`);
}

/** The settings a failure message names, read leniently: the config itself may be what failed. */
function startContext(): StartContext {
  const port = Number(process.env.PORT ?? 3000);
  return { host: process.env.HOST || '127.0.0.1', port: Number.isInteger(port) ? port : 3000, databaseUrl: process.env.DATABASE_URL || undefined };
}

const opened: Opened = {};
main(opened).catch(async (error) => {
  process.stderr.write(`${describeStartFailure(error, startContext())}\n`);
  if (['debug', 'trace'].includes(process.env.LOG_LEVEL ?? '')) process.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
  await opened.pool?.end().catch(() => {});
  await opened.embedded?.stop().catch(() => {}); // never leave the database running after a failed start
  process.exit(1);
});
