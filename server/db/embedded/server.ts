/**
 * Runs the PostgreSQL binaries: initdb, configuration, pg_ctl start/stop, a stale postmaster's
 * removal and the watchdog that stops the server when node dies without stopping it (kill -9,
 * OOM). Every failure carries the server's own words (the log's last lines), never `undefined`.
 * @module
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, chown, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Binaries } from './binaries.ts';
import { pgdataOf, runDirOf } from './layout.ts';
import { mkdirForServer, type ServerUser } from './user.ts';

const run = promisify(execFile);

export interface ServerContext {
  bin: Binaries;
  user: ServerUser;
  clusterDir: string;
}

const logPath = (ctx: ServerContext) => join(runDirOf(ctx.clusterDir), 'postgres.log');

async function runAsServer(ctx: ServerContext, file: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run(file, args, { uid: ctx.user.uid, gid: ctx.user.gid, env: { ...process.env, LC_ALL: 'C' } });
    return stdout;
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${file.split('/').pop()} failed: ${(e.stderr || e.stdout || e.message).trim()}`);
  }
}

async function logTail(ctx: ServerContext, lines = 5): Promise<string> {
  const text = await readFile(logPath(ctx), 'utf8').catch(() => '');
  return text
    .trim()
    .split('\n')
    .filter((l) => /FATAL|ERROR|PANIC|could not|LOG: +(?!database system)/.test(l))
    .slice(-lines)
    .map((l) => l.replace(/^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] /, '')) // the time and pid say nothing here
    .join('\n');
}

/** Writes a file the server's user owns (the server must read it; nobody else may). */
async function writeServerFile(ctx: ServerContext, path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: 0o600 });
  if (ctx.user.uid !== undefined) await chown(path, ctx.user.uid, ctx.user.gid!);
}

/**
 * Creates the cluster in a staging folder renamed into place when initdb has finished, so a start
 * killed halfway leaves no half-made cluster (the next start simply begins again). The superuser's
 * password goes through a 0600 file removed afterwards.
 */
export async function initCluster(ctx: ServerContext, superuser: string, password: string): Promise<void> {
  const target = pgdataOf(ctx.clusterDir);
  const staging = `${target}.init`;
  await rm(staging, { recursive: true, force: true });
  await mkdirForServer(staging, ctx.user);
  await rmdir(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return;
    throw new Error(`${target} holds files but no PG_VERSION, so it is no database Airlock made: move it aside and start again`);
  });
  const pwfile = join(runDirOf(ctx.clusterDir), 'initdb.pw');
  await writeServerFile(ctx, pwfile, `${password}\n`);
  try {
    await runAsServer(ctx, ctx.bin.initdb, [
      `--pgdata=${staging}`,
      `--username=${superuser}`,
      `--pwfile=${pwfile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      '--locale=C', // lc_messages and friends: plain English, whatever the machine has
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8', // Unicode-aware text functions without depending on the OS's locales
    ]);
  } finally {
    await rm(pwfile, { force: true });
  }
  await rename(staging, target);
}

const quote = (value: string) => `'${value.replaceAll("'", "''")}'`;

/**
 * Rewritten before every start: password authentication for every connection (legacy clusters
 * said `password`, i.e. clear text), and either a private Unix socket with no TCP at all, or
 * loopback TCP with no socket in a shared folder such as /tmp.
 */
export async function configure(ctx: ServerContext, listen: { socket: boolean; port: number }): Promise<void> {
  const pgdata = pgdataOf(ctx.clusterDir);
  await writeServerFile(
    ctx,
    join(pgdata, 'pg_hba.conf'),
    ['# Written by Airlock at every start.', 'local all all scram-sha-256', 'host all all 127.0.0.1/32 scram-sha-256', 'host all all ::1/128 scram-sha-256', ''].join('\n'),
  );
  const settings = listen.socket
    ? { listen_addresses: '', unix_socket_directories: runDirOf(ctx.clusterDir), unix_socket_permissions: '0700' }
    : { listen_addresses: '127.0.0.1', unix_socket_directories: '' };
  const lines = Object.entries({ ...settings, port: String(listen.port), password_encryption: 'scram-sha-256' }).map(([k, v]) => `${k} = ${quote(v)}`);
  await writeServerFile(ctx, join(pgdata, 'airlock.conf'), `# Written by Airlock at every start.\n${lines.join('\n')}\n`);
  const main = join(pgdata, 'postgresql.conf');
  if (!(await readFile(main, 'utf8')).includes("include_if_exists = 'airlock.conf'")) {
    await appendFile(main, "\ninclude_if_exists = 'airlock.conf'\n");
  }
}

/** pg_ctl start, waiting until it accepts connections; returns the postmaster's pid. */
export async function startServer(ctx: ServerContext): Promise<number> {
  // The previous run's log is kept once (it may tell why that run died); this run's starts empty.
  await rename(logPath(ctx), `${logPath(ctx)}.1`).catch(() => {});
  await writeServerFile(ctx, logPath(ctx), '');
  try {
    await runAsServer(ctx, ctx.bin.pgCtl, ['start', '-w', '-t', '60', '-s', '-D', pgdataOf(ctx.clusterDir), '-l', logPath(ctx)]);
  } catch (error) {
    const cause = (await logTail(ctx)) || (error as Error).message;
    throw new Error(`the embedded database did not start: ${cause.replaceAll('\n', ' | ')} (its log: ${logPath(ctx)})`);
  }
  const pid = await postmasterPid(ctx.clusterDir);
  if (pid === null) throw new Error(`the embedded database started but wrote no postmaster.pid: ${await logTail(ctx)}`);
  return pid;
}

/** The pid in postmaster.pid when that process is alive, else null. */
export async function postmasterPid(clusterDir: string): Promise<number | null> {
  const text = await readFile(join(pgdataOf(clusterDir), 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = Number(text.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : null;
}

/** Whether `pid` runs. A zombie (exited, not yet reaped by a parent that is not node) counts as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return !isZombie(pid);
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false; // no /proc (not Linux): kill(0) alone decides
  }
}

/** Fast shutdown (sessions rolled back, data safe); immediate shutdown if that takes too long. */
export async function stopServer(ctx: ServerContext, timeoutS = 20): Promise<void> {
  if (!existsSync(join(pgdataOf(ctx.clusterDir), 'postmaster.pid'))) return;
  const pid = await postmasterPid(ctx.clusterDir);
  try {
    await runAsServer(ctx, ctx.bin.pgCtl, ['stop', '-w', '-s', '-t', String(timeoutS), '-m', 'fast', '-D', pgdataOf(ctx.clusterDir)]);
  } catch {
    if ((await postmasterPid(ctx.clusterDir)) !== null) await runAsServer(ctx, ctx.bin.pgCtl, ['stop', '-w', '-s', '-m', 'immediate', '-D', pgdataOf(ctx.clusterDir)]);
  }
  // pg_ctl returns once postmaster.pid is removed; the process exits a moment later. Waiting for it
  // means "stopped" is true when we return (a next start never meets the old one still running).
  for (let waited = 0; pid !== null && isAlive(pid) && waited < 5_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
}

/**
 * A detached shell that outlives node: once node's pid is gone it stops the postmaster (SIGINT =
 * fast shutdown, then SIGQUIT = immediate after 10 s). It quits by itself when the postmaster
 * ends first. Polling each second bounds an orphan's life to about a second plus the shutdown.
 */
export function startWatchdog(postmaster: number, parent = process.pid): { stop(): void } {
  const script = [
    'while kill -0 "$1" 2>/dev/null; do kill -0 "$2" 2>/dev/null || exit 0; sleep 1; done',
    'kill -INT "$2" 2>/dev/null || exit 0',
    'i=0; while kill -0 "$2" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.5; i=$((i+1)); done',
    'kill -QUIT "$2" 2>/dev/null; exit 0',
  ].join('\n');
  const child = spawn('/bin/sh', ['-c', script, 'airlock-db-watchdog', String(parent), String(postmaster)], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  return {
    stop: () => {
      if (child.exitCode === null) child.kill('SIGTERM');
    },
  };
}
