/**
 * Capacity: N concurrent /chat streams paced at 20 tokens/s (the offline model in its own process
 * pausing 50 ms between words), driven by a light SSE load generator in a third process; N steps
 * up until the p99 added latency (inter-token gap beyond the model's 50 ms) passes 50 ms more than
 * the reference pipeline's at the same N, run right after it in the same process (on a shared
 * 2-core machine the model's own timer jitter and the neighbours' load are in both, so the
 * difference is ours). Prints per step the gateway process's own CPU (% of one core, µs per
 * token), its RSS and the gaps; then a smaller run through the real @gradio/client to show the
 * figures carry over.
 *
 *   npm run bench -- capacity     (BENCH_STEPS="100,200,400,600", BENCH_STEP_S=8, BENCH_GRADIO_N=40)
 */
import { startChild } from './children.ts';
import { startStack } from './children.ts';
import { fnIndexOf } from './raw-chat.ts';
import { reportBudgets } from './budgets.ts';
import { percentile } from './support.ts';

const PACE_MS = 50;
const STEPS = (process.env.BENCH_STEPS ?? '50,100,200,300,400,500,600,800').split(',').map(Number);
const STEP_S = Number(process.env.BENCH_STEP_S ?? 8);
const GRADIO_N = Number(process.env.BENCH_GRADIO_N ?? 40);
const LIMIT_MS = 50;

interface Result { gaps: number[]; tokens: number; turns: number; errors: number }

const stack = await startStack(PACE_MS);
const { base, token } = stack.gateway.ready;
const fn = await fnIndexOf(base, token, 'chat');
const load = await startChild<{ ready: true }>('./load-process.ts', [base, token, String(fn), stack.gateway.ready.ref]);

async function step(n: number, client: 'raw' | 'gradio' | 'reference') {
  const cpu0 = await stack.cpuMicros();
  const t0 = performance.now();
  const r = await load.ask<Result>({ cmd: 'run', n, seconds: STEP_S, client }, 'result');
  const wallMs = performance.now() - t0;
  const cpu = (await stack.cpuMicros()) - cpu0;
  const rss = await stack.gateway.ask<number>({ cmd: 'rss' }, 'rss');
  const sorted = r.gaps.sort((a, b) => a - b);
  const added99 = percentile(sorted, 99) - PACE_MS;
  console.log(
    `| ${n} | ${client} | ${(percentile(sorted, 50) - PACE_MS).toFixed(1)} | ${added99.toFixed(1)} | ${((cpu / 1000 / wallMs) * 100).toFixed(0)}% | ${(cpu / Math.max(1, r.tokens)).toFixed(0)} | ${(rss / 2 ** 20).toFixed(0)} | ${r.turns} | ${r.errors} |`,
  );
  return added99;
}

console.log(`/chat capacity at ${1000 / PACE_MS} tokens/s per stream, ${STEP_S} s per step; added = inter-token gap - ${PACE_MS} ms`);
console.log('| streams | path (client) | added p50 (ms) | added p99 (ms) | gateway CPU (1 core = 100%) | gateway CPU per token (µs) | gateway RSS (MiB) | turns | errors |');
console.log('|---|---|---|---|---|---|---|---|---|');
await step(10, 'raw'); // warm-up, printed too
let reached = 0;
for (const n of STEPS) {
  const ours = await step(n, 'raw');
  const floor = await step(n, 'reference');
  if (ours - floor > LIMIT_MS) break;
  reached = n;
}
await step(GRADIO_N, 'gradio');
await step(GRADIO_N, 'raw');
console.log(`streams reached with p99 added latency <= ${LIMIT_MS} ms beyond the reference's: ${reached} (steps ${STEPS.join(',')})`);
reportBudgets('capacity', { streams_reached: reached });
load.stop();
await stack.stop();
