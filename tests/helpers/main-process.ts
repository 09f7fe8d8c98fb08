/**
 * `server/main.ts` as a real child process (a kill -9 must kill the real thing): started with an
 * environment, resolved once it prints its ready line.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface MainProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export function startMain(args: string[], env: Record<string, string>): Promise<MainProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', ...args], {
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
