/**
 * One node process per embedded cluster. `owner.json` names the process (pid and its start time,
 * so a recycled pid is not mistaken for it). A live owner means a second start: refused with one
 * clear line. A dead owner (kill -9, OOM) means its postmaster, if any, is an orphan to stop.
 * @module
 */
import { readFileSync } from 'node:fs';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isAlive } from './server.ts';

export interface Owner {
  pid: number;
  started: string;
}

/** Another live process already runs this data folder. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
}

/** The process's start time from /proc (clock ticks since boot); '' where /proc is missing. */
function startTimeOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

/** Whether `owner` still runs: alive, and the same process (not a recycled pid). */
export function ownerAlive(owner: Owner): boolean {
  return owner.pid !== process.pid && isAlive(owner.pid) && startTimeOf(owner.pid) === owner.started;
}

const ownerPath = (dir: string) => join(dir, 'owner.json');

/**
 * Claims `dir` for this process. The file is created exclusively; a stale one is removed and the
 * claim tried again, then checked again a moment later, so of two starts racing over a stale
 * file only one goes on.
 */
export async function claimDataDir(dir: string, label: string): Promise<{ release(): Promise<void> }> {
  const me: Owner = { pid: process.pid, started: startTimeOf(process.pid) };
  let tookOverStale = false;
  for (let attempt = 0; attempt < 3; attempt++) {
    // Written whole to a temp file, then hard-linked into place: link() is atomic and refuses an
    // existing name, so nobody ever reads a half-written owner.
    const temp = `${ownerPath(dir)}.${process.pid}.tmp`;
    await writeFile(temp, JSON.stringify(me), { mode: 0o600 });
    try {
      await link(temp, ownerPath(dir));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const current = await readOwner(dir);
      if (current && ownerAlive(current)) {
        throw new DataDirInUseError(`${label} is in use by another Airlock process (pid ${current.pid}): stop it first, or set DATA_DIR to another folder`);
      }
      await rm(ownerPath(dir), { force: true });
      tookOverStale = true;
      continue;
    } finally {
      await rm(temp, { force: true });
    }
    if (tookOverStale) {
      // Two starts after a crash may both judge the old owner stale; the later removal deletes the
      // earlier claim. A moment later, only the start whose claim is on disk goes on.
      await new Promise((r) => setTimeout(r, 100));
      if ((await readOwner(dir))?.pid !== process.pid) break;
    }
    return {
      release: async () => {
        const current = await readOwner(dir);
        if (current?.pid === process.pid) await rm(ownerPath(dir), { force: true });
      },
    };
  }
  throw new DataDirInUseError(`${label} is being claimed by another process starting at the same time: try again`);
}

/** The live process running `dir`'s embedded cluster (the server), or null when none runs it. */
export async function liveOwnerOf(dir: string): Promise<{ pid: number } | null> {
  const owner = await readOwner(dir);
  return owner && ownerAlive(owner) ? { pid: owner.pid } : null;
}

async function readOwner(dir: string): Promise<Owner | null> {
  try {
    const value = JSON.parse(await readFile(ownerPath(dir), 'utf8')) as Owner;
    return Number.isInteger(value.pid) ? value : null;
  } catch {
    return null; // unreadable or half-written: treated as stale
  }
}
