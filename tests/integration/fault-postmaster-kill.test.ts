/**
 * Issue 10 item 3, the database part: kill -9 of the embedded postmaster while the real node
 * process runs; the app starts it again by itself and serves logins from the same data.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createFaultTable } from '../helpers/fault-table.ts';
import { clusterDirOf, missingMarkers, postmasterPidOf, startEmbeddedMain, waitGone, writeMarker, type MainProcess } from '../helpers/main-process.ts';

const RECOVERY_BOUND_MS = 30_000;

let dir: string;
let main: MainProcess | undefined;
const table = createFaultTable('postmaster-kill');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-pgrestart-'));
  await chmod(dir, 0o755);
});
afterAll(async () => {
  table.print();
  const postmaster = await postmasterPidOf(join(dir, 'data')).catch(() => null);
  if (main && main.child.exitCode === null) {
    main.child.kill('SIGTERM');
    await main.exited;
  }
  if (postmaster) await waitGone(postmaster, 15_000);
  const cluster = await clusterDirOf(join(dir, 'data')).catch(() => null);
  if (cluster && !cluster.startsWith(dir)) await rm(cluster, { recursive: true, force: true });
  await rm(dir, { recursive: true, force: true });
});

describe('embedded database restart', () => {
  it('kill -9 of the postmaster: the app restarts it and logins work again on the same data', async () => {
    const dataDir = join(dir, 'data');
    main = await startEmbeddedMain(dataDir);
    await writeMarker(main.url, await login(main.url, 'operator'), 'written before the postmaster died');

    const first = await postmasterPidOf(dataDir);
    process.kill(first, 'SIGKILL');
    expect(await waitGone(first, 5_000)).not.toBeNull();

    // 1. Until it is back, requests fail (that is another item's 503); then a login succeeds.
    const killedAt = Date.now();
    let token: string | null = null;
    while (!token && Date.now() - killedAt < RECOVERY_BOUND_MS) {
      token = await login(main.url, 'operator').catch(() => null);
      if (!token) await new Promise((r) => setTimeout(r, 250));
    }
    console.log(`logins work again ${Date.now() - killedAt} ms after kill -9 of the postmaster (bound ${RECOVERY_BOUND_MS} ms)`);
    expect(token).toMatch(/^ey/);
    const lost = await missingMarkers(main.url, token!, ['written before the postmaster died']);
    table.record({ fault: 'kill -9 embedded postmaster', outcome: `restarted by the app, logins after ${Date.now() - killedAt} ms`, lost });
    expect(lost).toBe(0);
    expect(await postmasterPidOf(dataDir)).not.toBe(first);
    // The child's report may reach our pipe a moment after the login it made possible.
    await expect.poll(() => main!.output(), { timeout: 10_000 }).toMatch(/the embedded database \(pid \d+\) stopped unexpectedly; starting it again/);
    await expect.poll(() => main!.output(), { timeout: 10_000 }).toMatch(/the embedded database is running again \(pid \d+\)/);

    // 2. A clean stop still takes the restarted database down.
    const second = await postmasterPidOf(dataDir);
    main.child.kill('SIGTERM');
    expect(await main.exited).toBe(0);
    expect(await waitGone(second, 2_000)).not.toBeNull();
  });
});
