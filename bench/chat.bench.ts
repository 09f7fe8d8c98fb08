/**
 * /chat latency bench against the reference pipeline (bench/reference.ts: bare LangGraph +
 * PostgresSaver -> raw SSE) in the same run, on the offline model in its own process and the
 * gateway in its own process. Every figure prints p50 and p99 and its ratio to the reference:
 *   submit -> first token, confirm -> first resumed token, per token in a burst (model delay 0),
 *   gateway CPU per token paced at 1 token/ms, bytes per token frame; and, independent of the
 *   machine's load, the database queries the gateway process sends before the first token.
 *
 *   npm run bench -- chat            (BENCH_TURNS to tune, default 30)
 *   BENCH_API_PROCESS=1 npm run bench -- chat   (the api role in its own process, as deployed)
 *
 * Each path first runs BENCH_WARMUP (default 5) submits and as many pause + confirm pairs, not
 * counted: the first turns of a fresh process run cold code (JIT), which is start-up, not the
 * steady state p50 and p99 describe.
 */
import { Client } from '@gradio/client';
import { type Timing, viaChat, viaReference } from './chat-clients.ts';
import { startStack } from './children.ts';
import { fnIndexOf, rawChat } from './raw-chat.ts';
import { reportBudgets } from './budgets.ts';
import { percentile } from './support.ts';

const TURNS = Number(process.env.BENCH_TURNS ?? 30);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
const PROMPT = 'hello';

const p = (xs: number[], q: number) => percentile([...xs].sort((a, b) => a - b), q);
function row(name: string, unit: string, scale: number, ours: number[], ref: number[]): string {
  const f = (x: number) => (x * scale).toFixed(scale === 1 ? 2 : 0);
  const r50 = p(ours, 50) / p(ref, 50);
  const r99 = p(ours, 99) / p(ref, 99);
  return `| ${name} (${unit}) | ${f(p(ours, 50))} | ${f(p(ours, 99))} | ${f(p(ref, 50))} | ${f(p(ref, 99))} | ${r50.toFixed(2)}x | ${r99.toFixed(2)}x |`;
}

async function burstAndApprovals() {
  const stack = await startStack(0);
  const { base, ref, token } = stack.gateway.ready;
  const client = await Client.connect(base, { headers: { Authorization: `Bearer ${token}` }, events: ['data', 'status'] });
  const confirmPair = async (version: string) => {
    const thread = `${version}-${Date.now()}`;
    if (!(await viaReference(ref, `deploy checkout-api ${version} to staging`, thread)).paused) throw new Error('reference did not pause');
    const refMs = (await viaReference(ref, '', thread, true)).ttftMs;
    const pause = await viaChat(client, `deploy checkout-api ${version} to staging`);
    const chatMs = (await viaChat(client, 'confirm', pause.last.metadata.conversation_id, 'confirm')).ttftMs;
    return { refMs, chatMs };
  };
  for (let i = 0; i < WARMUP; i++) {
    await viaReference(ref, PROMPT);
    await viaChat(client, PROMPT);
    await confirmPair(`0.9.${i}`);
  }
  const refRuns: Timing[] = [];
  const chatRuns: Timing[] = [];
  for (let i = 0; i < TURNS; i++) {
    refRuns.push(await viaReference(ref, PROMPT));
    chatRuns.push(await viaChat(client, PROMPT)); // a new conversation each turn ("new": see viaChat)
  }
  const refResume: number[] = [];
  const chatResume: number[] = [];
  for (let i = 0; i < Math.ceil(TURNS / 2); i++) {
    const { refMs, chatMs } = await confirmPair(`1.0.${i}`);
    refResume.push(refMs);
    chatResume.push(chatMs);
  }
  // Load-independent: queries the gateway process sends from the submit to the first token
  // (separate turns, so the IPC does not touch the timed ones). The count read at the first
  // token also holds queries of the same turn still in flight (checkpoint writes), in both paths.
  const queries = () => stack.gateway.ask<number>({ cmd: 'queries' }, 'queries');
  const counted = async (turn: (onFirst: () => Promise<void>) => Promise<unknown>) => {
    const before = await queries();
    let atFirst = 0;
    await turn(async () => void (atFirst = await queries()));
    return atFirst - before;
  };
  const q = { chat: [] as number[], ref: [] as number[], chatResume: [] as number[], refResume: [] as number[] };
  for (let i = 0; i < 5; i++) {
    q.chat.push(await counted((f) => viaChat(client, PROMPT, 'new', '', f)));
    q.ref.push(await counted((f) => viaReference(ref, PROMPT, '', false, f)));
    const thread = `q${i}-${Date.now()}`;
    await viaReference(ref, `deploy checkout-api 2.0.${i} to staging`, thread);
    q.refResume.push(await counted((f) => viaReference(ref, '', thread, true, f)));
    const pause = await viaChat(client, `deploy checkout-api 2.0.${i} to staging`);
    q.chatResume.push(await counted((f) => viaChat(client, 'confirm', pause.last.metadata.conversation_id, 'confirm', f)));
  }
  client.close();
  await stack.stop();
  return { refRuns, chatRuns, refResume, chatResume, q };
}

/** Paced at 1 token/ms: gateway-process CPU per token, /chat then the reference, and frame sizes. */
async function paced() {
  const stack = await startStack(1);
  const { base, ref, token } = stack.gateway.ready;
  const fn = await fnIndexOf(base, token, 'chat');
  const data = [{ text: PROMPT, files: [] }, '', '', '', [], '', ''];
  for (let i = 0; i < WARMUP; i++) {
    await rawChat(base, token, fn, data);
    await viaReference(ref, PROMPT);
  }
  const chatCpu: number[] = [];
  const refCpu: number[] = [];
  const chatBytes: number[] = [];
  const refBytes: number[] = [];
  for (let i = 0; i < TURNS; i++) {
    let before = await stack.cpuMicros();
    const run = await rawChat(base, token, fn, data);
    chatCpu.push((await stack.cpuMicros() - before) / run.tokenTimes.length / 1000);
    chatBytes.push(...run.frameBytes);
    before = await stack.cpuMicros();
    const r = await viaReference(ref, PROMPT);
    refCpu.push((await stack.cpuMicros() - before) / r.tokens / 1000);
    refBytes.push(`data: ${JSON.stringify({ msg: 'process_generating', output: { data: ['word '] } })}\n\n`.length);
  }
  await stack.stop();
  return { chatCpu, refCpu, chatBytes, refBytes };
}

const a = await burstAndApprovals();
const b = await paced();
console.log(`/chat (real @gradio/client; raw client for CPU and bytes) vs the reference pipeline, ${TURNS} turns after ${WARMUP} warm-up turns and confirms, offline model in its own process, api ${process.env.BENCH_API_PROCESS ? 'in its own process (BENCH_API_PROCESS)' : "in the gateway's process"}`);
console.log('| figure | /chat p50 | /chat p99 | reference p50 | reference p99 | ratio p50 | ratio p99 |');
console.log('|---|---|---|---|---|---|---|');
console.log(row('submit -> first token', 'ms', 1, a.chatRuns.map((r) => r.ttftMs), a.refRuns.map((r) => r.ttftMs)));
console.log(row('confirm -> first resumed token', 'ms', 1, a.chatResume, a.refResume));
console.log(row('per token, burst', 'µs', 1000, a.chatRuns.map((r) => r.perTokenMs), a.refRuns.map((r) => r.perTokenMs)));
console.log(row('gateway CPU per token, paced 1/ms', 'µs', 1000, b.chatCpu, b.refCpu));
console.log(row('bytes per token frame', 'B', 1000, b.chatBytes.map((x) => x / 1000), b.refBytes.map((x) => x / 1000)));
console.log(row('queries, submit -> first token', 'count', 1, a.q.chat, a.q.ref));
console.log(row('queries, confirm -> first resumed token', 'count', 1, a.q.chatResume, a.q.refResume));
console.log(`tokens per answer: /chat ${p(a.chatRuns.map((r) => r.tokens), 50)}, reference ${p(a.refRuns.map((r) => r.tokens), 50)}`);
reportBudgets('chat', {
  submit_ratio_p50: p(a.chatRuns.map((r) => r.ttftMs), 50) / p(a.refRuns.map((r) => r.ttftMs), 50),
  confirm_ratio_p50: p(a.chatResume, 50) / p(a.refResume, 50),
  queries_submit: p(a.q.chat, 50),
  queries_confirm: p(a.q.chatResume, 50),
});
