/**
 * The real `node --import tsx server/main.ts` on embedded defaults (no DATABASE_URL), for the
 * start-recovery and fault tests: start it, wait for its ready line or its exit, find the
 * embedded postmaster it runs, and wait for a process to be gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface MainProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

export interface MainExit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function embeddedEnv(dataDir: string, env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'warn', DATA_DIR: dataDir, DEMO_PASSWORD: 'demo-password-1', ...env };
  delete base.DATABASE_URL;
  return base;
}

function spawnMain(dataDir: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { env: embeddedEnv(dataDir, env), stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Starts main and resolves once it prints its ready line (rejects with its output if it exits). */
export function startMain(dataDir: string, env: Record<string, string> = {}): Promise<MainProcess> {
  const child = spawnMain(dataDir, env);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /is ready at (http:\/\/\S+)/.exec(output);
      if (match) resolve({ child, url: match[1], output: () => output, exited });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`exited ${code} before ready:\n${output}`)));
  });
}

/** Runs main expecting it to fail; resolves with its exit code and output. */
export function runMainToExit(dataDir: string, env: Record<string, string> = {}): Promise<MainExit> {
  const child = spawnMain(dataDir, env);
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

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Milliseconds until `pid` is gone, or null when it still runs after `timeoutMs`. */
export async function waitGone(pid: number, timeoutMs: number): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (!isAlive(pid)) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 100));
  }
  return isAlive(pid) ? null : Date.now() - started;
}
