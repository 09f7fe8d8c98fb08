/**
 * The real process: `server/main.ts` spawned with a test environment, resolved once it prints
 * its URL.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** Spawns `server/main.ts` (PORT 0, silent logs, demo users); `env` must give DATA_DIR. */
export function startMainProcess(args: string[], env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', ...args], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'silent', DEMO_PASSWORD: 'demo-password-1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
    exited.then((code) => reject(new Error(`exited ${code} before ready:\n${output}`)));
  });
}
