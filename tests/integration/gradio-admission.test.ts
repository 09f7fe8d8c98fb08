/**
 * Attack tests for admission control (issue 9 item 6): `/run` goes through the scheduler, one
 * user's 1,000 joins fill only that user's share (others still join and run at once), and
 * heartbeat streams are held only for valid sessions (authenticated, a few per user); anything
 * else gets ALIVE and an end after one period, never a 404.
 */
import { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointDefinition } from '../../server/gradio/index.ts';
import { joinEvent, readRawStream, sleep, startGradioServer, type GradioTestServer } from './gradio-server.ts';

type Who = { user: string };
const json = { label: 'Response', component: 'json' };
const HEARTBEAT_MS = 200;

/** A gate the test opens; `running` counts handlers inside it. */
function gate() {
  let open: () => void = () => {};
  const state = { running: 0, peak: 0, opened: new Promise<void>((r) => (open = r)), open: () => open() };
  return state;
}
const runGate = gate();
const userGate = gate();

const gated = (g: ReturnType<typeof gate>) => async (): Promise<unknown[]> => {
  g.running++;
  g.peak = Math.max(g.peak, g.running);
  try {
    await g.opened;
    return ['done'];
  } finally {
    g.running--;
  }
};

const endpoints: EndpointDefinition<Who>[] = [
  { apiName: 'run_gated', inputs: [], outputs: [json], concurrencyLimit: 2, queueSize: 4, handler: gated(runGate) },
  {
    apiName: 'per_user',
    inputs: [],
    outputs: [json],
    concurrencyLimit: 8,
    queueSize: 1000,
    userConcurrencyLimit: 1,
    userQueueSize: 3,
    handler: gated(userGate),
  },
  { apiName: 'quick', inputs: [], outputs: [json], userQueueSize: 3, handler: async ({ identity }) => [identity.user] },
];

let server: GradioTestServer;
const as = (user: string) => ({ authorization: `Bearer ${user}` });
beforeAll(async () => {
  server = await startGradioServer(endpoints, {
    authenticate: async (headers) => {
      const m = /^Bearer (\w+)$/.exec(String(headers.authorization));
      return m ? { user: m[1] } : null;
    },
    identityKey: (identity: Who) => identity.user,
    heartbeatMs: HEARTBEAT_MS,
    heartbeatsPerIdentity: 2,
  });
});
afterAll(async () => {
  runGate.open();
  userGate.open();
  await server?.close();
});

const run = (api: string, user: string) =>
  fetch(`${server.url}/gradio_api/run/${api}`, { method: 'POST', headers: { 'content-type': 'application/json', ...as(user) }, body: JSON.stringify({ data: [] }) });

describe('/run goes through the scheduler', () => {
  it('runs at most concurrencyLimit unqueued calls at once, 503 beyond queueSize', async () => {
    const calls = Array.from({ length: 4 }, () => run('run_gated', 'alice'));
    await expect.poll(() => runGate.running).toBe(2);
    const full = await run('run_gated', 'alice');
    expect(full.status).toBe(503);
    await sleep(100);
    expect(runGate.peak).toBe(2);
    runGate.open();
    const responses = await Promise.all(calls);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect((await responses[3].json()).data).toEqual(['done']);
    expect(runGate.peak).toBe(2);
  });
});

describe('/run at shutdown', () => {
  it('aborts running unqueued calls and refuses waiting ones, so close() is not held', async () => {
    const stopped: string[] = [];
    let started = 0;
    const forever: EndpointDefinition = {
      apiName: 'forever',
      inputs: [],
      outputs: [json],
      concurrencyLimit: 1,
      async *handler({ signal }) {
        started++;
        try {
          for (let i = 0; !signal.aborted; i++) {
            yield [i];
            await sleep(5);
          }
        } finally {
          stopped.push('handler');
        }
      },
    };
    const other = await startGradioServer([forever], { authenticate: async () => ({ user: 'x' }) });
    const call = () => fetch(`${other.url}/gradio_api/run/forever`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"data":[]}' });
    const running = call();
    await expect.poll(() => started).toBe(1);
    const waiting = call();
    await sleep(200); // the second call reaches the scheduler and waits behind the first
    await other.close();
    const [first, second] = await Promise.all([running, waiting]);
    expect(first.status).toBe(500);
    expect(await first.json()).toMatchObject({ title: 'Server stopped' });
    expect(second.status).toBe(503);
    expect(stopped).toEqual(['handler']);
    expect(started).toBe(1);
  });
});

describe('per-user caps', () => {
  it("one user's 1,000 joins get 429 past the share; another user still joins and runs at once", async () => {
    const statuses: number[] = [];
    for (let batch = 0; batch < 20; batch++) {
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => joinEvent(server.url, { data: [], fn_index: 2, session_hash: `flood-${batch}-${i}` }, as('mallory'))));
      statuses.push(...results.map((r) => r.status));
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(997);
    expect(statuses.filter((s) => s === 503)).toHaveLength(0);
    // mallory runs one at a time (her share), the other two wait
    await expect.poll(() => userGate.running).toBe(1);

    const victim = await joinEvent(server.url, { data: [], fn_index: 2, session_hash: 'victim' }, as('victor'));
    expect(victim.status).toBe(200);
    const stream = await fetch(`${server.url}/gradio_api/queue/data?session_hash=victim`, { headers: as('victor') });
    const { frames } = await readRawStream(stream, (f) => f.some((x) => x.msg === 'process_starts'));
    expect(frames.some((f) => f.msg === 'process_starts')).toBe(true);
    expect(userGate.running).toBe(2);
    // /run counts against the same share
    expect((await run('per_user', 'mallory')).status).toBe(429);
  });

  it("with the real client: the flooder's next call fails with the per-user message, another user's call runs", async () => {
    const mallory = await Client.connect(server.url, { headers: as('mallory') });
    await expect(mallory.predict('/per_user', [])).rejects.toMatchObject({ message: expect.stringMatching(/too many events of yours/i) });
    const victor = await Client.connect(server.url, { headers: as('victor') });
    expect((await victor.predict('/quick', [])).data).toEqual(['victor']);
    userGate.open();
    await expect.poll(() => userGate.running).toBe(0);
    expect((await mallory.predict('/per_user', [])).data).toEqual(['done']);
    mallory.close();
    victor.close();
  });
});

/** Reads a heartbeat stream until it ends or `stopAt` ALIVE frames arrived; returns the count and whether it ended by itself. */
async function heartbeats(response: Response, stopAt: number): Promise<{ alive: number; ended: boolean }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { alive: text.split('data: ALIVE\n\n').length - 1, ended: true };
    text += decoder.decode(value, { stream: true });
    const alive = text.split('data: ALIVE\n\n').length - 1;
    if (alive >= stopAt) {
      await reader.cancel();
      return { alive, ended: false };
    }
  }
}

describe('heartbeat held only for valid sessions', () => {
  const open = (headers: Record<string, string> = {}) => fetch(`${server.url}/gradio_api/heartbeat/any-session`, { headers });

  it('an unauthenticated heartbeat gets ALIVE (no 404) and ends after one period', async () => {
    const started = Date.now();
    const response = await open();
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('data: ALIVE\n\n');
    expect(Date.now() - started).toBeLessThan(HEARTBEAT_MS * 5);
  });

  it('300 unauthenticated heartbeats are not held: at most 64 live for one period, the rest end at once', async () => {
    const responses = await Promise.all(Array.from({ length: 300 }, () => open()));
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const started = Date.now();
    const bodies = await Promise.all(responses.map((r) => r.text()));
    expect(bodies.every((b) => b.startsWith('data: ALIVE'))).toBe(true);
    expect(Date.now() - started).toBeLessThan(HEARTBEAT_MS * 10);
  });

  it('an authenticated user keeps 2 heartbeats beating; a third ends after one period, while other users are held', async () => {
    const kept = await Promise.all([open(as('alice')), open(as('alice'))]);
    const third = await open(as('alice'));
    expect(third.status).toBe(200);
    expect(await heartbeats(third, 4)).toEqual({ alive: 1, ended: true });
    const carol = await open(as('carol'));
    const results = await Promise.all([...kept, carol].map((r) => heartbeats(r, 4)));
    expect(results).toEqual([0, 1, 2].map(() => ({ alive: 4, ended: false })));
  });
});
