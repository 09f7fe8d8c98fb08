/**
 * `./airlock users …` as scripts/cli.ts runs it (the file `./airlock` dispatches to), in a child
 * process with the given environment and standard input: its stdout, stderr and exit code.
 * @module
 */
import { spawn } from 'node:child_process';

export async function usersCli(args: string[], options: { env: Record<string, string | undefined>; stdin?: string }): Promise<{ stdout: string; stderr: string; code: number }> {
  const { DATABASE_URL: _, ...env } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/cli.ts', 'users', ...args], { env: { ...env, ...options.env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  child.stdin.end(options.stdin ?? '');
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  return { stdout, stderr, code };
}
