/**
 * The Debian packages the test suite drives for real (nginx in front of the product, Chromium for
 * the end-to-end tests, PyJWT for the README's Python snippet that checks a backend's two tokens). The README's test command must pass on a fresh machine, so when they are
 * missing and we are root with apt, they are installed; otherwise the exact command is printed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { NGINX_BIN } from './nginx.ts';

export const CHROMIUM_BIN = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';

/** Where Debian's python3-jwt puts PyJWT (the README's backend check, tests/integration/openapi-source). */
export const PYJWT_MODULE = '/usr/lib/python3/dist-packages/jwt/__init__.py';

/** Debian package -> the file the tests use. */
const REQUIRED = { nginx: NGINX_BIN, chromium: CHROMIUM_BIN, 'python3-jwt': PYJWT_MODULE } as const;

/** Installs what is missing when it can; returns why the suite cannot run, or undefined when it can. */
export function ensureSystemPackages(): string | undefined {
  const missing = Object.entries(REQUIRED).filter(([, bin]) => !existsSync(bin)).map(([pkg]) => pkg);
  if (missing.length === 0) return undefined;
  const command = `apt-get install -y ${missing.join(' ')}`;
  const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get');
  if (!canInstall) return `The tests need Debian's ${missing.join(' and ')}. Install them, then run the tests again:\n  sudo apt-get update && sudo ${command}`;
  process.stdout.write(`installing ${missing.join(', ')} (Debian packages the tests drive for real)\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', ...missing]]) {
    const result = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (result.status !== 0) return `\`apt-get ${args.join(' ')}\` failed (exit ${result.status}); run it by hand:\n  apt-get update && ${command}`;
  }
  const stillMissing = Object.entries(REQUIRED).filter(([, bin]) => !existsSync(bin)).map(([, bin]) => bin);
  return stillMissing.length ? `installed ${missing.join(', ')} but ${stillMissing.join(', ')} is still missing` : undefined;
}
