import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { superviseServer } from '../../../../../server/db/embedded/supervisor.ts';

const deadPid = () => spawnSync('true').pid; // exited and reaped: nobody has this pid now
const until = async (check: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('superviseServer', () => {
  it('restarts a dead server, backs off after a failed attempt, and reports each step', async () => {
    const lines: string[] = [];
    let attempts = 0;
    const supervisor = superviseServer({
      pid: deadPid(),
      checkEveryMs: 10,
      report: (line) => lines.push(line),
      restart: async () => {
        attempts++;
        if (attempts === 1) throw new Error('shared memory still in use');
        return process.pid; // "the new postmaster": alive, so no further restarts
      },
    });
    await until(() => attempts === 1 && lines.length === 2);
    expect(lines[1]).toMatch(/did not start again \(shared memory still in use\); next attempt in 1 s/);
    await new Promise((r) => setTimeout(r, 300));
    expect(attempts).toBe(1); // backing off: no attempt inside the second
    await until(() => attempts === 2 && lines.length === 4);
    expect(lines[3]).toBe(`the embedded database is running again (pid ${process.pid})`);
    expect(supervisor.pid).toBe(process.pid);
    await new Promise((r) => setTimeout(r, 100));
    expect(attempts).toBe(2);
    await supervisor.stop();
  });

  it('does nothing after stop (a deliberate shutdown is no crash)', async () => {
    let attempts = 0;
    const supervisor = superviseServer({ pid: deadPid(), checkEveryMs: 10, report: () => {}, restart: async () => (attempts++, process.pid) });
    await supervisor.stop();
    await new Promise((r) => setTimeout(r, 100));
    expect(attempts).toBe(0);
  });
});
