/**
 * Starts the real product (`node --import tsx server/main.ts`, all roles in one process) on a
 * loopback port, and stops it by pid. The e2e global setup and the gateway-restart journey use it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import type { QueryResultRow } from 'pg';
import { createPool, type Pool } from '../../../server/db/index.ts';
import { jobSchemaFor } from '../../../server/v1/job-queue.ts';
import { startCluster, type Cluster, type ClusterOptions } from '../../helpers/cluster.ts';
import { withSearchPath } from '../../helpers/database.ts';

export interface NodeProcess {
  pid: number;
  port: number;
  env: Record<string, string>;
}

/** The expiry deployment's browser access-token lifetime (SESSION_ACCESS_TTL_S), in seconds. */
export const EXPIRY_ACCESS_TTL_S = 5;

/** The deployments' service client secret: a spec reads the tools API as the gateway does (78-branches). */
export const E2E_SERVICE_SECRET = 'e2e-service-secret-0123456789';

/** What the global setup hands to the tests (a JSON file named by E2E_STATE). */
export interface E2EState {
  main: NodeProcess & { url: string };
  expiry: NodeProcess & { url: string };
  password: string;
  logDir: string;
  /** The folder the main deployment's MCP filesystem server serves. */
  notesDir: string;
  /**
   * The PostgreSQL server's base URL (no search_path) on which a spec may create a schema of its
   * own: DATABASE_URL, or else the embedded server the global setup started, so that a spec which
   * starts processes of its own (95-replicas) runs in both modes, as the README promises.
   */
  databaseUrl: string;
}

export function readState(): E2EState {
  const file = process.env.E2E_STATE;
  if (!file) throw new Error('E2E_STATE is not set: run the tests through playwright.config.ts');
  return JSON.parse(readFileSync(file, 'utf8')) as E2EState;
}

export function writeState(state: E2EState): void {
  writeFileSync(process.env.E2E_STATE!, JSON.stringify(state, null, 2));
}

/** Spawns the product and resolves when it answers on its port. */
export async function startProduct(port: number, env: Record<string, string>, log: string): Promise<NodeProcess> {
  const { openSync } = await import('node:fs');
  const out = openSync(log, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: process.cwd(),
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', out, out],
    detached: true, // its own process group, so a test can kill it like an outage
  });
  child.unref();
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the product exited with ${child.exitCode}; see ${log}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/api/agent/info`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the product did not start in 60 s; see ${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { pid: child.pid!, port, env };
}

/** Stops one process we started (by pid), hard or gracefully. */
export async function stopProduct(pid: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return; // already gone
  }
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/**
 * A cluster of the real product (tests/helpers/cluster.ts: replicas behind the real nginx) on a
 * fresh schema of the e2e PostgreSQL server (DATABASE_URL's, or the embedded one), for the specs
 * that start processes of their own (48-approvals-inbox, 95-replicas). `query` reads that schema;
 * `stop` stops the processes and drops the schema (and its job queue's).
 */
export interface SchemaCluster {
  cluster: Cluster;
  databaseUrl: string;
  query<T extends QueryResultRow = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  stop(): Promise<void>;
}

export async function startSchemaCluster(name: string, options: Omit<ClusterOptions, 'databaseUrl'>): Promise<SchemaCluster> {
  const base = readState().databaseUrl;
  const schema = `e2e_${name}_${randomBytes(4).toString('hex')}`;
  const once = async <T>(url: string, work: (pool: Pool) => Promise<T>): Promise<T> => {
    const pool = createPool(url, { max: 1 });
    try {
      return await work(pool);
    } finally {
      await pool.end();
    }
  };
  await once(base, (pool) => pool.query(`CREATE SCHEMA ${schema}`));
  const databaseUrl = withSearchPath(base, schema);
  const drop = () => once(base, (pool) => pool.query(`DROP SCHEMA IF EXISTS ${schema}, ${jobSchemaFor(schema)} CASCADE`));
  let cluster: Cluster;
  try {
    cluster = await startCluster({ ...options, databaseUrl });
  } catch (error) {
    await drop();
    throw error;
  }
  return {
    cluster,
    databaseUrl,
    query: async <T extends QueryResultRow>(sql: string, params: unknown[] = []) => once(databaseUrl, async (pool) => (await pool.query<T>(sql, params)).rows),
    async stop() {
      await cluster.stop();
      await drop();
    },
  };
}
