/**
 * The database the CLI (`./airlock audit verify`) reads: DATABASE_URL, else the embedded one of
 * DATA_DIR, whose default is the server's own (`.data`, server/config.ts). The CLI looks and never
 * creates: with no cluster there it says so in one line (it once ran initdb in a new `data/`
 * folder and then died with a stack trace querying that empty cluster). A cluster a live server
 * runs is connected to as it runs (its credentials, its postmaster's port and socket), never
 * started or stopped; a stopped one is started for the check and stopped after it.
 * @module
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startEmbeddedPostgres } from '../server/db/index.ts';
import { APP_ROLE, connectionUrl, pgdataOf, readCredentials } from '../server/db/embedded/layout.ts';
import { liveOwnerOf } from '../server/db/embedded/lock.ts';

/** The server's default DATA_DIR (server/config.ts). */
export const DEFAULT_DATA_DIR = '.data';

/** Why the CLI cannot check anything: said in one line, exit 2. */
export class CliError extends Error {
  override readonly name = 'CliError';
}

export interface CliDatabase {
  url: string;
  /** Where it is, for messages: DATABASE_URL, or the data folder. */
  label: string;
  close(): Promise<void>;
}

/** Opens the database to read (see the module comment); throws CliError when there is none. */
export async function openCliDatabase(env: NodeJS.ProcessEnv = process.env): Promise<CliDatabase> {
  if (env.DATABASE_URL) return { url: env.DATABASE_URL, label: 'DATABASE_URL', close: async () => {} };
  const dataDir = resolve(env.DATA_DIR || DEFAULT_DATA_DIR);
  const dir = join(dataDir, 'postgres');
  const credentials = await readCredentials(dir).catch((error: Error) => {
    throw new CliError(error.message);
  });
  if (!credentials || !existsSync(join(pgdataOf(credentials.clusterDir), 'PG_VERSION'))) {
    throw new CliError(`no Airlock database in ${dataDir} (DATA_DIR, default ${DEFAULT_DATA_DIR}): start Airlock there first, or set DATABASE_URL or DATA_DIR`);
  }
  const label = `the database in ${dataDir}`;
  if (await liveOwnerOf(dir)) {
    const listen = await postmasterListen(credentials.clusterDir);
    if (!listen) throw new CliError(`the Airlock server using ${dataDir} is starting or stopping its database: try again in a moment`);
    const url = connectionUrl({ user: APP_ROLE, password: credentials.appPassword, database: 'airlock', clusterDir: credentials.clusterDir, ...listen });
    return { url, label, close: async () => {} };
  }
  const embedded = await startEmbeddedPostgres(dir, 'airlock', { report: () => {} });
  return { url: embedded.url, label, close: () => embedded.stop() };
}

/**
 * Where a running postmaster listens, from its postmaster.pid (line 4 the port, line 6 the listen
 * address: empty when it listens on its socket only, as server/db/embedded-server.ts configures it).
 */
async function postmasterListen(clusterDir: string): Promise<{ port: number; socket: boolean } | null> {
  const lines = (await readFile(join(pgdataOf(clusterDir), 'postmaster.pid'), 'utf8').catch(() => '')).split('\n');
  const port = Number(lines[3]);
  if (!Number.isInteger(port) || port <= 0 || lines.length < 6) return null;
  return { port, socket: lines[5].trim() === '' };
}
