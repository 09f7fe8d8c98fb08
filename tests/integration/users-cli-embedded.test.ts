/**
 * `./airlock users …` on the embedded database (issue 39, decision 11): while a live process owns
 * the data folder (the server running), the command connects to its cluster (which a second start
 * would refuse: "in use by another Airlock process") and leaves it running; with nobody running it,
 * the command starts the cluster, migrates, and stops it again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPool, runMigrations, startEmbeddedPostgres, type EmbeddedDatabase } from '../../server/db/index.ts';
import { usersCli } from '../helpers/users-cli.ts';

let root: string;
let embedded: EmbeddedDatabase | undefined;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'airlock-users-cli-'));
});
afterAll(async () => {
  await embedded?.stop();
  await rm(root, { recursive: true, force: true });
});

it('works next to a running server, then on its own', async () => {
  // This test process plays the running server: it owns DATA_DIR/postgres and migrated it.
  embedded = await startEmbeddedPostgres(join(root, 'postgres'), 'airlock', { report: () => {} });
  const pool = createPool(embedded.url, { max: 1 });
  await runMigrations(pool);
  const added = await usersCli(['add', 'root', '--role', 'admin', '--password-stdin'], { env: { DATA_DIR: root }, stdin: 'root-password-1\n' });
  expect(added).toMatchObject({ code: 0, stdout: 'added root (admin)\n' });
  const { rows } = await pool.query("SELECT role, source FROM users WHERE username = 'root'");
  expect(rows).toEqual([{ role: 'admin', source: 'local' }]);
  await pool.end();
  const pid = embedded.pid;
  expect(() => process.kill(pid, 0)).not.toThrow(); // the command left the server's cluster running
  await embedded.stop();
  embedded = undefined;

  const listed = await usersCli(['list'], { env: { DATA_DIR: root } });
  expect(listed).toMatchObject({ code: 0, stdout: 'root\tadmin\tlocal\tenabled\t-\n' });
});
