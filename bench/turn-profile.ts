/**
 * Where a turn's gateway CPU goes, /chat next to the reference: one stack paced at 1 token/ms (as
 * the chat bench's CPU figure), BENCH_TURNS turns of each path under the gateway process's own CPU
 * profiler (nothing else runs meanwhile), then CPU per turn by area (our folders, each package,
 * node's internals, socket writes, GC), sorted by what /chat spends beyond the reference. A
 * diagnosis, not a figure, so not part of `npm run bench`:
 *
 *   node --import tsx bench/turn-profile.ts        (BENCH_TURNS, default 150)
 *
 * `BENCH_PATH=confirm` profiles confirms instead: each path pauses outside the profile, then only
 * its resume (/chat's confirm through the real @gradio/client, the reference's `resume=1`) is
 * profiled, so the figure is CPU per confirm.
 */
import { writeFileSync } from 'node:fs';
import type { Profiler, Runtime } from 'node:inspector';
import { Client } from '@gradio/client';
import { viaChat, viaReference } from './chat-clients.ts';
import { startStack } from './children.ts';
import { fnIndexOf, rawChat } from './raw-chat.ts';

const TURNS = Number(process.env.BENCH_TURNS ?? 150);
const CONFIRMS = process.env.BENCH_PATH === 'confirm';
const WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String']);

/** The area a sampled frame belongs to. */
function areaOf(frame: Runtime.CallFrame): string | null {
  // Idle, and the profiler's own work (starting and stopping it around each confirm).
  if (frame.functionName === '(idle)' || frame.url === 'node:inspector') return null;
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
const referenceTurn = () => viaReference(ref, 'hello');

/** Sums the areas of several profiles. */
function add(into: Map<string, number>, areas: Map<string, number>): void {
  for (const [area, ms] of areas) into.set(area, (into.get(area) ?? 0) + ms);
}

const profileStart = () => stack.gateway.ask({ cmd: 'profile-start' }, 'profiling');
const profileStop = async () => {
  const profile = await stack.gateway.ask<Profiler.Profile>({ cmd: 'profile-stop' }, 'profile');
  if (process.env.BENCH_PROFILE_OUT) writeFileSync(`${process.env.BENCH_PROFILE_OUT}-${profiles++}.cpuprofile`, JSON.stringify(profile));
  return byArea(profile);
};
let profiles = 0;

async function profiled(turn: () => Promise<unknown>): Promise<Map<string, number>> {
  for (let i = 0; i < 10; i++) await turn(); // warm-up
  await profileStart();
  for (let i = 0; i < TURNS; i++) await turn();
  return profileStop();
}

/** Each pause runs outside the profile, each resume inside it. */
async function profiledResumes(pause: (i: number) => Promise<string>, resume: (id: string) => Promise<unknown>): Promise<Map<string, number>> {
  for (let i = 0; i < 5; i++) await resume(await pause(-1 - i)); // warm-up
  const areas = new Map<string, number>();
  for (let i = 0; i < TURNS; i++) {
    const id = await pause(i);
    await profileStart();
    await resume(id);
    add(areas, await profileStop());
  }
  return areas;
}

async function chatConfirms(): Promise<Map<string, number>> {
  const client = await Client.connect(base, { headers: { Authorization: `Bearer ${token}` }, events: ['data', 'status'] });
  const areas = await profiledResumes(
    async (i) => (await viaChat(client, `deploy checkout-api 3.${i + 10}.0 to staging`)).last.metadata.conversation_id,
    (id) => viaChat(client, 'confirm', id, 'confirm'),
  );
  client.close();
  return areas;
}

const referenceConfirms = () =>
  profiledResumes(
    async (i) => {
      const thread = `p${i}-${Date.now()}`;
      await viaReference(ref, 'deploy checkout-api 1.0.0 to staging', thread);
      return thread;
    },
    (thread) => viaReference(ref, '', thread, true),
  );

const chat = CONFIRMS ? await chatConfirms() : await profiled(chatTurn);
const reference = CONFIRMS ? await referenceConfirms() : await profiled(referenceTurn);
await stack.stop();

const perTurn = (areas: Map<string, number>, area: string) => (areas.get(area) ?? 0) / TURNS;
const total = (areas: Map<string, number>) => [...areas.values()].reduce((a, b) => a + b, 0) / TURNS;
const rows = [...new Set([...chat.keys(), ...reference.keys()])]
  .map((area) => ({ area, chat: perTurn(chat, area), reference: perTurn(reference, area) }))
  .sort((a, b) => b.chat - b.reference - (a.chat - a.reference));
console.log(`Gateway CPU per ${CONFIRMS ? 'confirm' : 'turn'} (ms), ${TURNS} of each, paced at 1 token/ms: /chat ${total(chat).toFixed(2)}, reference ${total(reference).toFixed(2)}`);
console.log('| area | /chat | reference | /chat - reference |');
console.log('|---|---|---|---|');
for (const r of rows.slice(0, 25)) console.log(`| ${r.area} | ${r.chat.toFixed(2)} | ${r.reference.toFixed(2)} | ${(r.chat - r.reference).toFixed(2)} |`);
