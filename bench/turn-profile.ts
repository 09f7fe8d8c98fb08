/**
 * Where a turn's gateway CPU goes, /chat next to the reference: one stack paced at 1 token/ms (as
 * the chat bench's CPU figure), BENCH_TURNS turns of each path under the gateway process's own CPU
 * profiler (nothing else runs meanwhile), then CPU per turn by area (our folders, each package,
 * node's internals, socket writes, GC), sorted by what /chat spends beyond the reference. A
 * diagnosis, not a figure, so not part of `npm run bench`:
 *
 *   node --import tsx bench/turn-profile.ts        (BENCH_TURNS, default 150)
 */
import type { Profiler, Runtime } from 'node:inspector';
import { startStack } from './children.ts';
import { fnIndexOf, rawChat } from './raw-chat.ts';

const TURNS = Number(process.env.BENCH_TURNS ?? 150);
const WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String']);

/** The area a sampled frame belongs to. */
function areaOf(frame: Runtime.CallFrame): string | null {
  if (frame.functionName === '(idle)') return null;
  if (WRITES.has(frame.functionName)) return '(socket writes)';
  if (frame.functionName === '(garbage collector)') return '(gc)';
  const url = frame.url;
  if (!url) return '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return url.split('/')[0];
  const ours = /\/(server\/[^/]+|bench)\//.exec(url);
  return ours ? ours[1] : url;
}

/** CPU ms per area over the whole profile. */
function byArea(profile: Profiler.Profile): Map<string, number> {
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const areas = new Map<string, number>();
  profile.samples!.forEach((id, i) => {
    const area = areaOf(frames.get(id)!);
    if (area) areas.set(area, (areas.get(area) ?? 0) + profile.timeDeltas![i] / 1000);
  });
  return areas;
}

const stack = await startStack(1);
const { base, ref, token } = stack.gateway.ready;
const fn = await fnIndexOf(base, token, 'chat');
const data = [{ text: 'hello', files: [] }, '', '', '', [], '', ''];
const chatTurn = () => rawChat(base, token, fn, data);
const referenceTurn = async () => {
  const res = await fetch(`${ref}?thread=`, { method: 'POST', body: 'hello' });
  for await (const _ of res.body!); // drain
};

async function profiled(turn: () => Promise<unknown>): Promise<Map<string, number>> {
  for (let i = 0; i < 10; i++) await turn(); // warm-up
  await stack.gateway.ask({ cmd: 'profile-start' }, 'profiling');
  for (let i = 0; i < TURNS; i++) await turn();
  return byArea(await stack.gateway.ask<Profiler.Profile>({ cmd: 'profile-stop' }, 'profile'));
}

const chat = await profiled(chatTurn);
const reference = await profiled(referenceTurn);
await stack.stop();

const perTurn = (areas: Map<string, number>, area: string) => (areas.get(area) ?? 0) / TURNS;
const total = (areas: Map<string, number>) => [...areas.values()].reduce((a, b) => a + b, 0) / TURNS;
const rows = [...new Set([...chat.keys(), ...reference.keys()])]
  .map((area) => ({ area, chat: perTurn(chat, area), reference: perTurn(reference, area) }))
  .sort((a, b) => b.chat - b.reference - (a.chat - a.reference));
console.log(`Gateway CPU per turn (ms), ${TURNS} turns each, paced at 1 token/ms: /chat ${total(chat).toFixed(2)}, reference ${total(reference).toFixed(2)}`);
console.log('| area | /chat | reference | /chat - reference |');
console.log('|---|---|---|---|');
for (const r of rows.slice(0, 25)) console.log(`| ${r.area} | ${r.chat.toFixed(2)} | ${r.reference.toFixed(2)} | ${(r.chat - r.reference).toFixed(2)} |`);
