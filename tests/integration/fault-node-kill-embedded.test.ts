/**
 * Every start recovers (issue 10 items 1, 6, 7), with the real process on embedded defaults:
 * no DATABASE_URL, a DATA_DIR in a folder other users cannot enter (0700; as root the database
 * runs as an unprivileged user). kill -9 of node leaves no database behind for long, the next start
 * comes up on the same data, a second start and a busy port each fail with one clear line.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createFaultTable } from '../helpers/fault-table.ts';
import {
  clusterDirOf, isAlive, missingMarkers, postmasterPidOf, runMainToExit, startEmbeddedMain, waitGone, writeMarker, type MainProcess,
} from '../helpers/main-process.ts';

/** An orphaned postmaster must be gone within this bound (watchdog poll 1 s + fast shutdown). */
const ORPHAN_BOUND_MS = 15_000;

let privateDir: string;
let dataDir: string;
const running: MainProcess[] = [];
const table = createFaultTable('node-kill-embedded');

beforeAll(async () => {
  privateDir = await mkdtemp(join(tmpdir(), 'airlock-private-'));
  await chmod(privateDir, 0o700); // like /root: the database's own user cannot enter it
  dataDir = join(privateDir, 'data');
});

afterAll(async () => {
  table.print();
  for (const main of running) if (main.child.exitCode === null) main.child.kill('SIGKILL');
  const cluster = await clusterDirOf(dataDir).catch(() => null);
  const pid = await postmasterPidOf(dataDir).catch(() => null);
  if (pid && isAlive(pid)) await waitGone(pid, ORPHAN_BOUND_MS);
  if (cluster && !cluster.startsWith(privateDir)) await rm(cluster, { recursive: true, force: true });
  await rm(privateDir, { recursive: true, force: true });
});

async function started(env: Record<string, string> = {}): Promise<MainProcess> {
  const main = await startEmbeddedMain(dataDir, env);
  running.push(main);
  return main;
}

function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(stderr).not.toContain('undefined');
  return lines[0]!;
}

describe('start recovery (real process, embedded database, 0700 parent folder)', () => {
  it('1. starts from a folder other users cannot enter, and serves logins', async () => {
    const main = await started();
    const token = await login(main.url, 'operator');
    expect(token).toMatch(/^ey/);
    await writeMarker(main.url, token, 'written before kill -9 #1');
    expect(isAlive(await postmasterPidOf(dataDir))).toBe(true);
  });

  it('2. a second start on the same DATA_DIR while the first runs: one clear line, exit 1', async () => {
    const second = await runMainToExit(dataDir);
    expect(second.code).toBe(1);
    expect(oneLine(second.stderr)).toMatch(/^Airlock cannot start: the data folder .* is in use by another Airlock process \(pid \d+\): stop it first/);
    expect(isAlive(await postmasterPidOf(dataDir))).toBe(true); // the first one's database is untouched
    const first = running.at(-1)!;
    const lost = await missingMarkers(first.url, await login(first.url, 'operator'), ['written before kill -9 #1']);
    table.record({ fault: 'second start on the same DATA_DIR', outcome: 'refused in one line, first untouched', lost });
    expect(lost).toBe(0);
  });

  it('3. kill -9 of node: the orphaned postmaster is gone within the bound, and the next start comes up', async () => {
    const first = running.at(-1)!;
    const postmaster = await postmasterPidOf(dataDir);
    first.child.kill('SIGKILL');
    await first.exited;
    const goneAfter = await waitGone(postmaster, ORPHAN_BOUND_MS);
    console.log(`orphaned postmaster gone ${goneAfter} ms after kill -9 of node (bound ${ORPHAN_BOUND_MS} ms)`);
    expect(goneAfter).not.toBeNull();

    const next = await started();
    const token = await login(next.url, 'operator'); // same data: the demo users are still there
    const lost = await missingMarkers(next.url, token, ['written before kill -9 #1']);
    table.record({ fault: 'kill -9 node (embedded database)', outcome: `orphan gone in ${goneAfter} ms, next start up`, lost });
    expect(lost).toBe(0);
    await writeMarker(next.url, token, 'written before kill -9 #2');
  });

  it('4. kill -9 and an immediate restart (the orphan still running): the start stops it and comes up', async () => {
    const previous = running.at(-1)!;
    const orphan = await postmasterPidOf(dataDir);
    previous.child.kill('SIGKILL');
    await previous.exited;
    const next = await started(); // at once: the watchdog has not acted yet
    expect(await waitGone(orphan, 1)).not.toBeNull(); // the old postmaster was stopped, not adopted twice
    expect(await postmasterPidOf(dataDir)).not.toBe(orphan);
    const lost = await missingMarkers(next.url, await login(next.url, 'operator'), ['written before kill -9 #1', 'written before kill -9 #2']);
    table.record({ fault: 'kill -9 node, immediate restart', outcome: 'orphan stopped by the start, up', lost });
    expect(lost).toBe(0);

    const postmaster = await postmasterPidOf(dataDir);
    next.child.kill('SIGTERM');
    expect(await next.exited).toBe(0);
    // A clean stop takes the database down with it (pg_ctl stop -w returns as the pid file goes).
    expect(await waitGone(postmaster, 2_000)).not.toBeNull();
  });

  it('5. a port in use: one clear line, exit 1, and no database left running', async () => {
    const busy: Server = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    const port = (busy.address() as { port: number }).port;
    try {
      const other = join(privateDir, 'other');
      const result = await runMainToExit(other, { PORT: String(port) });
      expect(existsSync(join(other, 'postgres'))).toBe(false); // checked before any database work
      expect(result.code).toBe(1);
      expect(oneLine(result.stderr)).toBe(
        `Airlock cannot start: port ${port} on 127.0.0.1 is already in use by another program. Stop that program, or set PORT to a free port.`,
      );
    } finally {
      busy.close();
    }
  });

  it('6. an unreachable DATABASE_URL: one line naming it (without its password) and what to do', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r)); // nothing listens there now
    for (const host of ['127.0.0.1', 'localhost']) {
      const result = await runMainToExit(join(privateDir, 'external'), { DATABASE_URL: `postgres://app:s3cret@${host}:${port}/airlock` });
      expect(result.code).toBe(1);
      expect(oneLine(result.stderr)).toMatch(
        new RegExp(`^Airlock cannot start: the database postgres://app@${host}:${port}/airlock cannot be reached \\(.+\\)\\. Check DATABASE_URL`),
      );
      expect(result.stderr).not.toContain('s3cret');
    }
  });
});
