/**
 * Embedded PostgreSQL for the zero-configuration start: a real server, data under DATA_DIR.
 *
 * Each start: claim the folder (a second start is refused), stop an orphaned postmaster left by
 * a killed node, create the cluster on first use (random superuser password) or upgrade a legacy
 * one (airlock/airlock), listen on a private Unix socket (loopback TCP when the path is too long),
 * start a watchdog, then give the app a URL for a non-superuser role that owns its database.
 * @module
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { findBinaries } from './binaries.ts';
import {
  APP_ROLE, connectionUrl, type Credentials, LEGACY, pgdataOf, randomSecret, readCredentials, runDirOf,
  SHARED_CLUSTER_ROOT, SOCKET_PORT, socketFits, SUPERUSER, writeCredentials,
} from './layout.ts';
import { claimDataDir } from './lock.ts';
import { prepareRoles } from './roles.ts';
import { superviseServer } from './supervisor.ts';
import { configure, initCluster, postmasterPid, startServer, startWatchdog, stopServer, type ServerContext } from './server.ts';
import { isRoot, mkdirForServer, serverCanEnter, serverUser } from './user.ts';

export { DataDirInUseError } from './lock.ts';

export interface EmbeddedDatabase {
  /** The application role's URL (not a superuser). */
  url: string;
  /** The postmaster's current pid (a restarted one after it died). */
  readonly pid: number;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/** First start: fresh secrets; where the cluster goes depends on who can reach `dir`. */
async function newCredentials(dir: string, canEnter: boolean): Promise<Credentials> {
  const legacy = existsSync(join(dir, 'pgdata', 'PG_VERSION'));
  const clusterDir = legacy || canEnter ? dir : join(SHARED_CLUSTER_ROOT, randomBytes(8).toString('hex'));
  return {
    version: 1,
    superuser: legacy ? LEGACY.user : SUPERUSER,
    superuserPassword: randomSecret(),
    ...(legacy ? { legacyPassword: LEGACY.password } : {}),
    appPassword: randomSecret(),
    clusterDir,
  };
}

/** Starts (creating on first use) the PostgreSQL server whose files live under `dir`. */
export async function startEmbeddedPostgres(
  dir: string,
  database = 'airlock',
  {
    report = (line: string) => void process.stderr.write(`${line}\n`),
    tcp = false,
  }: {
    report?: (line: string) => void;
    /** Loopback TCP even where the socket fits (tests that put a TCP proxy in front of it). */
    tcp?: boolean;
  } = {},
): Promise<EmbeddedDatabase> {
  dir = resolve(dir);
  await mkdir(dir, { recursive: true }); // parents get the usual mode; `dir` itself is narrowed below
  await chmod(dir, 0o700);
  const user = await serverUser();
  // As root the server's user must pass through `dir` (never list it): credentials stay 0600 root.
  if (isRoot()) await chmod(dir, 0o711);
  const lock = await claimDataDir(dir, `the data folder ${dir}`);
  let ctx: ServerContext | undefined;
  let started = false;
  try {
    let credentials: Credentials | null = await readCredentials(dir);
    if (!credentials) {
      credentials = await newCredentials(dir, serverCanEnter(dir, user));
      await writeCredentials(dir, credentials); // before initdb: a crash after it must not lose the password
    }
    const { clusterDir } = credentials;
    if (clusterDir !== dir) {
      await mkdir(SHARED_CLUSTER_ROOT, { recursive: true, mode: 0o711 });
      await chmod(SHARED_CLUSTER_ROOT, 0o711); // passable, not listable: each cluster folder is 0700
      await mkdirForServer(clusterDir, user);
    }
    await mkdirForServer(runDirOf(clusterDir), user);
    ctx = { bin: await findBinaries(user), user, clusterDir };

    if ((await postmasterPid(clusterDir)) !== null) await stopServer(ctx); // an orphan of a killed node
    if (!existsSync(join(pgdataOf(clusterDir), 'PG_VERSION'))) {
      await initCluster(ctx, credentials.superuser, credentials.superuserPassword);
    }
    const socket = !tcp && socketFits(clusterDir);
    const port = socket ? SOCKET_PORT : await freePort();
    await configure(ctx, { socket, port });
    const pid = await startServer(ctx);
    started = true;
    let watchdog = startWatchdog(pid);
    const urlFor = (u: string, password: string, db: string) => connectionUrl({ user: u, password, database: db, clusterDir, port, socket });

    credentials = await prepareRoles({ credentials, database, urlFor, save: (c) => writeCredentials(dir, c) });
    const live = ctx;
    const supervisor = superviseServer({
      pid,
      report,
      restart: async () => {
        watchdog.stop();
        await configure(live, { socket, port });
        const restarted = await startServer(live);
        watchdog = startWatchdog(restarted);
        return restarted;
      },
    });
    return {
      url: urlFor(APP_ROLE, credentials.appPassword, database),
      get pid() {
        return supervisor.pid;
      },
      async stop() {
        await supervisor.stop();
        await stopServer(live);
        watchdog.stop();
        await lock.release();
      },
    };
  } catch (error) {
    if (started && ctx) await stopServer(ctx).catch(() => {});
    await lock.release();
    throw error;
  }
}
