/**
 * `server/main.ts` as a real child process (a kill -9 must kill the real thing): started with an
 * environment, resolved once it prints its ready line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isAlive } from '../../server/db/embedded/server.ts';

export interface MainProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** `nodeArgs` go before the script (`--max-old-space-size=768`: the memory fault tests). */
export function startMain(args: string[], env: Record<string, string>, options: { nodeArgs?: string[] } = {}): Promise<MainProcess> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', 'server/main.ts', ...args], {
    // Tests log in as the demo users; with DATABASE_URL set they are off unless asked for.
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'silent', DEMO_USERS: 'true', DEMO_PASSWORD: 'demo-password-1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async (graceMs = 5_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /is ready at (http:\/\/\S+)/.exec(output);
      if (match) resolve({ child, url: match[1], output: () => output, exited, stop });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    exited.then((code) => reject(new Error(`exited ${code} before ready:\n${output}`)));
  });
}

/* ---- Embedded defaults (no DATABASE_URL): the start-recovery and database fault tests. ---- */

export interface MainExit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a start on embedded defaults in `dataDir` ('' counts as unset). */
export function embeddedEnv(dataDir: string, env: Record<string, string> = {}): Record<string, string> {
  return { DATABASE_URL: '', LOG_LEVEL: 'warn', DATA_DIR: dataDir, ...env };
}

/** Starts main on embedded defaults and resolves at its ready line. */
export function startEmbeddedMain(dataDir: string, env: Record<string, string> = {}): Promise<MainProcess> {
  return startMain([], embeddedEnv(dataDir, env));
}

/** Runs main on embedded defaults expecting it to fail; resolves with its exit code and output. */
export function runMainToExit(dataDir: string, env: Record<string, string> = {}): Promise<MainExit> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    env: { ...process.env, PORT: '0', DEMO_PASSWORD: 'demo-password-1', ...embeddedEnv(dataDir, env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => (stdout += c));
  child.stderr!.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Where the embedded cluster of a DATA_DIR lives (credentials.json records it). */
export async function clusterDirOf(dataDir: string): Promise<string> {
  return JSON.parse(await readFile(join(dataDir, 'postgres', 'credentials.json'), 'utf8')).clusterDir;
}

/** The embedded postmaster's pid, from its postmaster.pid. */
export async function postmasterPidOf(dataDir: string): Promise<number> {
  const text = await readFile(join(await clusterDirOf(dataDir), 'pgdata', 'postmaster.pid'), 'utf8');
  return Number(text.split('\n')[0]);
}

export { isAlive };

/** Milliseconds until `pid` is gone, or null when it still runs after `timeoutMs`. */
export async function waitGone(pid: number, timeoutMs: number): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (!isAlive(pid)) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 100));
  }
  return isAlive(pid) ? null : Date.now() - started;
}

/** Writes a conversation titled `title` through the api; the fault tests check it survives. */
export async function writeMarker(url: string, token: string, title: string): Promise<void> {
  const res = await fetch(`${url}/api/assistant/conversations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  });
  if (res.status !== 201) throw new Error(`creating the marker conversation answered ${res.status}`);
}

/** How many of `titles` are missing from the user's conversations (the data lost). */
export async function missingMarkers(url: string, token: string, titles: string[]): Promise<number> {
  const res = await fetch(`${url}/api/assistant/conversations?limit=100`, { headers: { authorization: `Bearer ${token}` } });
  const items = ((await res.json()) as { items: Array<{ title: string }> }).items;
  return titles.filter((t) => !items.some((i) => i.title === t)).length;
}
