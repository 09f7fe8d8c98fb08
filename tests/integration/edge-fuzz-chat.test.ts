/**
 * Issue 9, proof (the stream side): a property-based fuzz (fast-check) of the /chat endpoint's
 * five data slots and event_data, through a real queue join and the real event stream. An HTTP
 * status says little here (errors travel inside the stream), so each event must complete within
 * 15 s and never end in an INTERNAL error: bad input is a VALIDATION_ERROR (or NOT_FOUND,
 * APPROVAL_NOT_FOUND…), never the database's or a crash.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { joinEvent, readRawStream } from './gradio-server.ts';

const RUNS = Number(process.env.FUZZ_CHAT_RUNS ?? 150);

let db: TestDatabase;
let server: TestServer;
let token: string;
let conversationId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, roles: ['api', 'gateway'] });
  token = await login(server.url, 'admin');
  const res = await fetch(`${server.url}/api/assistant/conversations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  conversationId = ((await res.json()) as { id: string }).id;
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

const text = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.constantFrom('', ' ', '\u0000', 'hi\u0000', 'deploy checkout-api 2.4.1 to staging', 'start maintenance on payments for 30 minutes', 'what can you do?', 'x'.repeat(20_000), '\u202eevil', '<script>alert(1)</script>'),
);
// Mostly values of the declared types (textbox: string or null; files: FileData objects), so that
// the handler itself is exercised; a share of wrong types checks the join's 422.
const str = (more: fc.Arbitrary<string>) => fc.oneof({ weight: 4, arbitrary: more }, { weight: 1, arbitrary: fc.constant(null) });
const rarely = (value: fc.Arbitrary<string>) => fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: value });
const conv = str(
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('{conv}', '') },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  ),
);
const action = str(
  fc.oneof({ weight: 4, arbitrary: fc.constant('') }, { weight: 2, arbitrary: fc.constantFrom('confirm', 'deny', 'CONFIRM', 'approve') }, { weight: 1, arbitrary: fc.string({ maxLength: 10 }) }),
);
const fileData = fc.record(
  {
    path: fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('/etc/passwd', '../../x', 'a\u0000b', '/tmp')),
    orig_name: fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('a\u0000.txt', '\u202etxt.exe')),
  },
  { requiredKeys: ['path'] },
);
const files = fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(fileData, { maxLength: 12 }) });
const message = fc.oneof(text, fc.record({ text, files }, { requiredKeys: [] }));
const typed = fc.tuple(message, conv, action, str(text), fc.oneof(files, fc.constant(null)), str(fc.string({ maxLength: 20 })), rarely(fc.oneof(fc.uuid(), fc.string({ maxLength: 20 }))));
const untyped = fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 8 });
const slots = fc.oneof({ weight: 9, arbitrary: typed.map((t) => [...t] as unknown[]) }, { weight: 1, arbitrary: untyped });
const eventData = fc.oneof(fc.constant(null), fc.tuple(conv, action), fc.jsonValue({ maxDepth: 2 }));

const fill = (v: unknown) => (v === '{conv}' ? conversationId : v);

describe('fuzz: /chat never ends in INTERNAL nor hangs', () => {
  it(`holds for ${RUNS} generated submissions`, { timeout: 600_000 }, async () => {
    let count = 0;
    const failures: string[] = [];
    const codes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(slots, eventData, async (data, extra) => {
        count++;
        const session = randomUUID();
        const body = { data: data.map(fill), event_data: Array.isArray(extra) ? extra.map(fill) : extra, fn_index: 1, session_hash: session, trigger_id: 1 };
        const label = JSON.stringify(body).slice(0, 200);
        const joined = await joinEvent(`${server.url}/api/agent/gradio`, body, { authorization: `Bearer ${token}` });
        if (joined.status >= 500) return void failures.push(`join ${joined.status}: ${label}`);
        if (joined.status !== 200) {
          const key = `join ${joined.status}`;
          return void codes.set(key, (codes.get(key) ?? 0) + 1);
        }
        const abort = AbortSignal.timeout(15_000);
        try {
          const stream = await fetch(`${server.url}/api/agent/gradio/gradio_api/queue/data?session_hash=${session}`, { headers: { authorization: `Bearer ${token}` }, signal: abort });
          const { frames } = await readRawStream(stream, (f) => f.some((x) => x.msg === 'process_completed'));
          const done = frames.find((f) => f.msg === 'process_completed');
          if (!done) return void failures.push(`no completion: ${label}`);
          const last = done.output?.data?.[0];
          // An error ends the event with success:false and "CODE: detail" (Gradio clients raise on it);
          // a taxonomy code other than INTERNAL is a clean refusal, anything else a failure.
          const failedCode = /^([A-Z][A-Z_]+):/.exec(String(done.output?.error ?? ''))?.[1];
          const code = last?.metadata?.type === 'error' ? String(last.metadata.code) : done.success ? 'ok' : failedCode ?? `failed: ${done.output?.error ?? ''}`;
          codes.set(code, (codes.get(code) ?? 0) + 1);
          if (code === 'INTERNAL' || code.startsWith('failed')) failures.push(`${code}: ${label}`);
        } catch (error) {
          failures.push(`HANG ${(error as Error).message}: ${label}`);
        }
      }),
      { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? 20261203) },
    );
    process.stdout.write(`fuzz /chat: ${count} submissions, ${failures.length} INTERNAL/failed/hung; outcomes ${JSON.stringify(Object.fromEntries(codes))}\n`);
    for (const f of failures.slice(0, 20)) process.stdout.write(`  ${f}\n`);
    expect(failures).toEqual([]);
  });
});
