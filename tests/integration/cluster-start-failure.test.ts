/**
 * The nginx and cluster helpers (tests, the replicas bench, `npm run cluster`) on a machine without
 * nginx: a clear error instead of an unhandled 'error' event that killed the whole process, and no
 * server processes left running (the replicas bench left its api and gateway behind that way).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster } from '../helpers/cluster.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startNginx } from '../helpers/nginx.ts';

const MISSING = '/nonexistent/sbin/nginx';

/** Live processes this test process started that run `server/main.ts`. */
function serverChildren(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/<pid>/stat is the parent pid (after the command in parentheses).
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (ppid === process.pid && cmdline.includes('server/main.ts')) pids.push(Number(entry));
    } catch {
      // The process ended while it was read.
    }
  }
  return pids;
}

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('helpers without nginx', () => {
  it('startNginx rejects with what to do when the binary is missing', async () => {
    await expect(startNginx({ upstream: 1, bin: MISSING })).rejects.toThrow(/nginx could not be started \(\/nonexistent\/sbin\/nginx\): .*ENOENT.*Install Debian's nginx/);
  });

  it('startCluster rejects and stops the api and the replicas it had started', async () => {
    expect(serverChildren()).toEqual([]);
    await expect(startCluster({ replicas: 2, databaseUrl: db.url, nginxBin: MISSING })).rejects.toThrow(/nginx could not be started/);
    expect(serverChildren()).toEqual([]);
  }, 60_000);
});
