/**
 * Issue 36 item 11: an exception nothing catches ends the server (its state is unknown), but it is
 * logged first, as a fatal record with its stack (what a log collector keeps) and on stderr, and
 * the exit code is 1. The real `server/main.ts` as a child process; the fault is thrown by a
 * preloaded helper right after the ready line (tests/helpers/crash-after-ready.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startMain } from '../helpers/main-process.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

it('an uncaught exception is logged with its stack (fatal record and stderr), then the process exits 1', async () => {
  const main = await startMain(['--role', 'api'], { DATABASE_URL: db.url, SERVICE_CLIENT_SECRET: 'uncaught-test-secret-0123456789', LOG_LEVEL: 'info' }, {
    nodeArgs: ['--import', 'tsx', '--import', './tests/helpers/crash-after-ready.ts'],
  });
  const closed = new Promise((resolve) => main.child.once('close', resolve));
  expect(await main.exited).toBe(1);
  await closed;
  const records = main
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; origin?: string; err?: { message: string; stack: string } });
  const fatal = records.find((r) => r.level === 60);
  expect(fatal).toMatchObject({ msg: 'uncaught exception; exiting 1', origin: 'uncaughtException', err: { message: 'crash-after-ready: a fault nothing catches' } });
  expect(fatal?.err?.stack).toContain('at Immediate.crashAfterReady');
  expect(main.output()).toMatch(/Airlock: uncaught exception \(uncaughtException\); exiting 1\nError: crash-after-ready: a fault nothing catches\n\s+at /);
});
