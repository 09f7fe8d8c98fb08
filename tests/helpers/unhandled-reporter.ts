/**
 * A vitest reporter that writes the run's unhandled errors to a file. Vitest fails a run that
 * caught one even when every test passed, and its JSON report has no field for them, so without
 * this the test command's last lines (all that CI keeps) said "1 failed" and named nothing.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Reporter, SerializedError } from 'vitest/node';

export const UNHANDLED_FILE = 'test-results/vitest-unhandled.json';

export interface UnhandledError {
  /** The error's name and message, first line. */
  message: string;
  /** The test file, and the latest test, running when it surfaced (when vitest knows them). */
  file?: string;
  test?: string;
  /** The first stack frame outside node_modules: where to look first. */
  at?: string;
  stack?: string;
}

export default class UnhandledReporter implements Reporter {
  onTestRunEnd(_modules: unknown, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const errors: UnhandledError[] = unhandledErrors.map((error) => {
      const e = error as SerializedError & { VITEST_TEST_PATH?: string; VITEST_TEST_NAME?: string };
      const stack = typeof e.stack === 'string' ? e.stack.split('\n') : [];
      return {
        message: `${e.name ?? 'Error'}: ${String(e.message ?? '').split('\n', 1)[0]}`.slice(0, 300),
        file: e.VITEST_TEST_PATH,
        test: e.VITEST_TEST_NAME,
        at: stack.find((line) => line.trim().startsWith('at ') && !line.includes('node_modules'))?.trim(),
        stack: stack.slice(0, 8).join('\n') || undefined,
      };
    });
    mkdirSync(dirname(UNHANDLED_FILE), { recursive: true });
    writeFileSync(UNHANDLED_FILE, JSON.stringify(errors, null, 2));
  }
}
