/**
 * The unit project runs without per-file isolation (vitest.config.ts `isolate: false`): the files a
 * worker runs share one `globalThis`, one `process.env` and one timer clock (vitest still gives each
 * file fresh project modules and its own `vi.mock`s). A file that leaves fake timers on, an env var
 * changed or a global stubbed would change the files after it, in an order that shuffles. This setup
 * file (it runs before each unit file) makes such a leak fail the file that made it, then undoes it
 * so the next file starts clean.
 */
import { afterAll, vi } from 'vitest';

const envBefore = { ...process.env };
const globalsBefore = new Set(Reflect.ownKeys(globalThis));
const descriptors = new Map(Reflect.ownKeys(globalThis).map((k) => [k, Object.getOwnPropertyDescriptor(globalThis, k)]));

/** What this file changed in the shared process and did not undo, undone here. */
function leaks(): string[] {
  const found: string[] = [];
  if (vi.isFakeTimers()) found.push('fake timers are still on (call vi.useRealTimers() in afterEach/finally)');
  vi.useRealTimers();
  for (const key of new Set([...Object.keys(envBefore), ...Object.keys(process.env)])) {
    if (process.env[key] === envBefore[key]) continue;
    found.push(`process.env.${key} changed (use vi.stubEnv + vi.unstubAllEnvs)`);
    if (envBefore[key] === undefined) delete process.env[key];
    else process.env[key] = envBefore[key];
  }
  for (const key of Reflect.ownKeys(globalThis)) {
    const before = descriptors.get(key);
    const now = Object.getOwnPropertyDescriptor(globalThis, key);
    const added = !globalsBefore.has(key);
    const replaced = !added && before && 'value' in before && now && 'value' in now && !Object.is(before.value, now.value);
    if (!added && !replaced) continue;
    // Globals a library creates once per process on first import (tslib's `__awaiter`…, zod's
    // `__zod_globalRegistry`, LangChain's `lc_*` registries) are meant to be shared, as in production.
    if (typeof key === 'symbol' || key.startsWith('__') || key.startsWith('lc_')) continue;
    found.push(`globalThis.${key} ${added ? 'added' : 'replaced'} (use vi.stubGlobal + vi.unstubAllGlobals)`);
  }
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
  return found;
}

afterAll(() => {
  const found = leaks();
  // One line: tests/run-all.ts keeps the first line of a file's error in its `Failed:` list.
  if (found.length) throw new Error(`this file leaks state into the next unit file (no isolation): ${found.join('; ')}`);
});
