/**
 * `npm start`'s first step: builds the UI only when it is missing or older than its sources, and
 * quietly (one line; vite's output only when the build fails).
 *
 *   node --import tsx scripts/build-ui.ts          # build if needed
 *   node --import tsx scripts/build-ui.ts --check  # exit 1 when a build is needed, build nothing
 * @module
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildReason, newestMtime } from './build-ui-decision.ts';

const INPUTS = ['src', 'static', 'svelte.config.js', 'vite.config.ts', 'tsconfig.json', 'package-lock.json'];
const OUTPUT = join('build', 'handler.js');

function mtimeOrNull(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

/** Every file under the inputs, with its mtime (folders walked; missing inputs skipped). */
function inputMtimes(paths: string[]): number[] {
  const out: number[] = [];
  for (const path of paths) {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) continue;
    if (!stat.isDirectory()) out.push(stat.mtimeMs);
    else out.push(stat.mtimeMs, ...inputMtimes(readdirSync(path).map((name) => join(path, name))));
  }
  return out;
}

function build(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolveBuild) => {
    const child = spawn(join('node_modules', '.bin', 'vite'), ['build', '--logLevel', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', (error) => resolveBuild({ code: 1, output: `${output}${error.message}` }));
    child.once('close', (code) => resolveBuild({ code, output }));
  });
}

const reason = buildReason({ outputMtime: mtimeOrNull(OUTPUT), newestInputMtime: newestMtime(inputMtimes(INPUTS)) });
if (process.argv.includes('--check')) process.exit(reason ? 1 : 0);
if (reason) {
  const started = Date.now();
  process.stdout.write(`Building the UI (${reason})...\n`);
  const { code, output } = await build();
  if (code !== 0) {
    process.stderr.write(`${output.trim().split('\n').slice(-40).join('\n')}\nThe UI build failed (vite exited ${code}); the lines above say why.\n`);
    process.exit(1);
  }
  process.stdout.write(`UI built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
