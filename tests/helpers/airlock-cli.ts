/**
 * `./airlock …` as a reviewer runs it (the evidence checks: `audit verify`, `receipt verify`), with no
 * database in its environment, and the files it reads written into `dir`.
 * @module
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export function airlockCli(dir: string) {
  /** Runs `./airlock ...args`: its stdout line and exit code. */
  async function airlock(...args: string[]): Promise<{ line: string; code: number }> {
    const { DATABASE_URL: _, ...env } = process.env;
    try {
      const { stdout } = await promisify(execFile)('./airlock', args, { env: { ...env, DATA_DIR: join(dir, 'no-data') } });
      return { line: stdout.trim(), code: 0 };
    } catch (e) {
      const err = e as { stdout: string; code: number };
      return { line: err.stdout.trim(), code: err.code };
    }
  }
  /** Writes `content` (JSON unless a string) to `dir/name`; its path. */
  function file(name: string, content: unknown): string {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  }
  return { airlock, file };
}
