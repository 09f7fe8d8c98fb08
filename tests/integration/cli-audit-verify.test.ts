/**
 * Issue 36 item 9: `./airlock audit verify` with no DATABASE_URL and no DATA_DIR reads the
 * server's default data folder, `.data` (it read `data/`), and never creates a cluster nor dies
 * with a stack trace: no database there, or one Airlock never migrated, is one clear line (exit 2);
 * a cluster a live server runs is read as it runs (here the test process owns it, as a server
 * would), never started a second time. The CLI is the real scripts/cli.ts in a fresh working
 * folder; the embedded PostgreSQL is real.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { insertAudit } from '../../server/db/audit.ts';
import { readCredentials } from '../../server/db/embedded/layout.ts';
import { createPool, runMigrations, startEmbeddedPostgres, type EmbeddedDatabase } from '../../server/db/index.ts';

const CLI = fileURLToPath(new URL('../../scripts/cli.ts', import.meta.url));
const TSX = createRequire(import.meta.url).resolve('tsx');

let cwd: string;
let embedded: EmbeddedDatabase | undefined;

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'airlock-cli-'));
});

afterAll(async () => {
  await embedded?.stop();
  // Run as root, the cluster lives outside the folder (/var/lib/airlock/<id>): removed with it.
  const clusterDir = (await readCredentials(join(cwd, '.data', 'postgres')).catch(() => null))?.clusterDir;
  if (clusterDir) await rm(clusterDir, { recursive: true, force: true });
  await rm(cwd, { recursive: true, force: true });
});

/** `./airlock audit verify` in `cwd` with neither DATABASE_URL nor DATA_DIR. */
function verify(): Promise<{ code: number; stdout: string; stderr: string }> {
  const { DATABASE_URL: _url, DATA_DIR: _dir, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', TSX, CLI, 'audit', 'verify'], { cwd, env }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code) : 0, stdout: stdout.trim(), stderr: stderr.trim() }),
    );
  });
}

it('no database in .data: one line naming it, exit 2, and nothing created', async () => {
  const result = await verify();
  expect(result).toEqual({ code: 2, stdout: '', stderr: `audit verify: no Airlock database in ${join(cwd, '.data')} (DATA_DIR, default .data): start Airlock there first, or set DATABASE_URL or DATA_DIR` });
  expect(existsSync(join(cwd, 'data'))).toBe(false);
  expect(existsSync(join(cwd, '.data'))).toBe(false);
});

it('a cluster in .data Airlock never migrated: one line, exit 2, no stack trace', async () => {
  // Created and stopped: the CLI starts it for the check, and stops it again.
  await (await startEmbeddedPostgres(join(cwd, '.data', 'postgres'), 'airlock', { report: () => {} })).stop();
  const result = await verify();
  expect(result).toEqual({ code: 2, stdout: '', stderr: `audit verify: the database in ${join(cwd, '.data')} has no Airlock audit log (Airlock never started on it): nothing to verify` });
});

it('the cluster a live process runs (as the server does): read as it runs, its chain verified', async () => {
  embedded = await startEmbeddedPostgres(join(cwd, '.data', 'postgres'), 'airlock', { report: () => {} });
  const pool = createPool(embedded.url, { max: 1 });
  try {
    await runMigrations(pool);
    await insertAudit(pool, {
      serviceActor: 'system', userId: null, username: null, userRole: null, operation: 'cli.test', method: 'JOB', path: 'cli-test',
      arguments: {}, outcome: 'success', statusCode: 200, errorCode: null, toolCallId: null, conversationId: null, durationMs: null,
    });
  } finally {
    await pool.end();
  }
  expect(await verify()).toEqual({ code: 0, stdout: 'ok 1 rows', stderr: '' });
});
