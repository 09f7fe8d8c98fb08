import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimDataDir, DataDirInUseError } from '../../../../../server/db/embedded/lock.ts';

let dir: string;
beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'airlock-lock-'))));
afterEach(() => rm(dir, { recursive: true, force: true }));

const startTime = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
};

describe.skipIf(process.platform !== 'linux')('claimDataDir', () => {
  it('claims a free folder, refuses a second claim by a live owner, and frees it on release', async () => {
    const parent = process.ppid; // a live process that is not us
    await writeFile(join(dir, 'owner.json'), JSON.stringify({ pid: parent, started: startTime(parent) }));
    await expect(claimDataDir(dir, 'the data folder X')).rejects.toThrow(DataDirInUseError);
    await expect(claimDataDir(dir, 'the data folder X')).rejects.toThrow(`the data folder X is in use by another Airlock process (pid ${parent})`);

    await rm(join(dir, 'owner.json'));
    const claim = await claimDataDir(dir, 'X');
    expect(JSON.parse(await readFile(join(dir, 'owner.json'), 'utf8')).pid).toBe(process.pid);
    await claim.release();
    await expect(readFile(join(dir, 'owner.json'))).rejects.toThrow(/ENOENT/);
  });

  it.each([
    ['a dead pid', () => ({ pid: spawnSync('true').pid, started: '1' })],
    ['a recycled pid (same number, other start time)', () => ({ pid: process.ppid, started: '1' })],
    ['a damaged file', () => 'not json'],
  ])('takes over a stale owner: %s', async (_name, owner) => {
    const value = owner();
    await writeFile(join(dir, 'owner.json'), typeof value === 'string' ? value : JSON.stringify(value));
    const claim = await claimDataDir(dir, 'X');
    expect(JSON.parse(await readFile(join(dir, 'owner.json'), 'utf8')).pid).toBe(process.pid);
    await claim.release();
  });
});
