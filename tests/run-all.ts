/**
 * The test command: type check, unit + integration tests (vitest), UI build, end-to-end tests
 * (Playwright through nginx). Ends with one line: `N passed, N failed`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { ensureSystemPackages } from './helpers/system-packages.ts';
import { UNHANDLED_FILE, type UnhandledError } from './helpers/unhandled-reporter.ts';

const UNHANDLED_REPORTER = 'tests/helpers/unhandled-reporter.ts';

const bin = (name: string) => `node_modules/.bin/${name}`;
let passed = 0;
let failed = 0;
/** Names of what failed, repeated after the totals: CI keeps only the end of the output. */
const failures: string[] = [];

const MINUTE = 60_000;

/** Runs one step; a step that outlives its budget is stopped and counts as failed (CI has 90 minutes in all). */
function step(title: string, command: string, args: string[], env: Record<string, string> = {}, budgetMs = 10 * MINUTE): boolean {
  process.stdout.write(`\n=== ${title} ===\n`);
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...env }, timeout: budgetMs, killSignal: 'SIGTERM' });
  if (result.error) process.stdout.write(`${title}: ${result.error.message}\n`);
  return result.status === 0;
}

mkdirSync('test-results', { recursive: true });

// nginx and Chromium are real parts of the suite: installed here (root with apt) or named at once.
const missing = ensureSystemPackages();
if (missing) {
  process.stdout.write(`${missing}\n\n0 passed, 1 failed\n`);
  process.exit(1);
}

if (step('svelte-kit sync', bin('svelte-kit'), ['sync']) && step('type check', bin('tsc'), ['--noEmit', '-p', 'tsconfig.json'])) passed++;
else failed++;

const vitestJson = 'test-results/vitest.json';
const playwrightJson = 'test-results/playwright.json';
// A report left by an earlier run must never be counted as this run's.
for (const report of [vitestJson, playwrightJson, UNHANDLED_FILE]) rmSync(report, { force: true });
const vitestOk = step('unit + integration (vitest)', bin('vitest'), ['run', '--reporter=default', '--reporter=json', `--reporter=./${UNHANDLED_REPORTER}`, `--outputFile.json=${vitestJson}`], {}, 30 * MINUTE);
if (existsSync(vitestJson)) {
  const report = JSON.parse(readFileSync(vitestJson, 'utf8')) as VitestReport;
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  const named = vitestFailures(report);
  failures.push(...named);
  const unhandled = existsSync(UNHANDLED_FILE) ? (JSON.parse(readFileSync(UNHANDLED_FILE, 'utf8')) as UnhandledError[]) : [];
  failures.push(...unhandled.map((e) => `unhandled error in ${e.file?.replace(`${process.cwd()}/`, '') ?? 'an unknown file'}${e.test ? ` (latest test: ${e.test})` : ''}: ${e.message}${e.at ? ` ${e.at.replace(`${process.cwd()}/`, '')}` : ''}`));
  // A suite that failed to load, or an unhandled error: vitest fails the run though no test failed.
  if (!vitestOk && report.numFailedTests === 0) {
    failed++;
    if (named.length === 0 && unhandled.length === 0) failures.push('vitest exited non-zero with no failed test and no unhandled error: see its output above');
  }
} else failed++;

const built = step('build', bin('vite'), ['build']);
if (!built) failed++;
else if (existsSync('playwright.config.ts')) {
  const e2eOk = step('end-to-end (Playwright, Chromium, nginx)', bin('playwright'), ['test', '--reporter=list,json'], {
    PLAYWRIGHT_JSON_OUTPUT_NAME: playwrightJson,
  }, 30 * MINUTE);
  if (existsSync(playwrightJson)) {
    const report = JSON.parse(readFileSync(playwrightJson, 'utf8')) as { stats: { expected: number; unexpected: number; flaky: number } };
    passed += report.stats.expected + report.stats.flaky;
    failed += report.stats.unexpected;
    if (!e2eOk && report.stats.unexpected === 0) {
      failed++;
      failures.push('playwright exited non-zero with no failed test (its global setup or teardown?): see its output above');
    }
  } else failed++;
}

if (failures.length) process.stdout.write(`\nFailed:\n${failures.map((f) => `  ${f}`).join('\n')}\n`);
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(failed === 0 ? 0 : 1);

interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  testResults: { name: string; status: string; message?: string; assertionResults: { fullName: string; status: string; failureMessages?: string[] }[] }[];
}

/** One line per failed test (file, name, the first line of its message), or per file that failed to load. */
function vitestFailures(report: VitestReport): string[] {
  const firstLine = (text = '') => text.split('\n', 1)[0].slice(0, 300);
  return report.testResults.flatMap((file) => {
    const where = file.name.replace(`${process.cwd()}/`, '');
    const tests = file.assertionResults.filter((t) => t.status === 'failed');
    if (tests.length === 0 && file.status === 'failed') return [`${where}: ${firstLine(file.message)}`];
    return tests.map((t) => `${where} › ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`);
  });
}
