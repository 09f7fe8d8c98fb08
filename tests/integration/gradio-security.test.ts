/**
 * Attack tests for sessions and events bound to identities (issue 9 item 4), with the real
 * @gradio/client and raw HTTP: another user's session_hash reads nothing and takes nothing over,
 * another user's event_id cancels nothing, and the JS client given `token:` (which sends no
 * Authorization on cancel/reset) still cancels its own event with the session_hash + event_id pair.
 */
import { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointDefinition } from '../../server/gradio/index.ts';
import { joinEvent, readRawStream, sleep, startGradioServer, type GradioTestServer } from './gradio-server.ts';

type Who = { user: string };
const aborted = new Set<string>();
const json = { label: 'Response', component: 'json' };

/** Yields `<user>-secret-<i>` every 10 ms, `count` times (a stream worth stealing). */
const endpoints: EndpointDefinition<Who>[] = [
  {
    apiName: 'secrets',
    inputs: [{ name: 'count', label: 'Count', component: 'number', default: 30 }],
    outputs: [json],
    async *handler({ data, identity, signal, eventId }) {
      try {
        for (let i = 0; i < (data[0] as number) && !signal.aborted; i++) {
          yield [`${identity.user}-secret-${i}`];
          await sleep(10);
        }
      } finally {
        if (signal.aborted) aborted.add(eventId);
      }
    },
  },
];

const USERS: Record<string, string> = { 'Bearer alice': 'alice', 'Bearer bob': 'bob', 'Bearer hf_alice': 'alice' };
const alice = { authorization: 'Bearer alice' };
const bob = { authorization: 'Bearer bob' };

let server: GradioTestServer;
beforeAll(async () => {
  server = await startGradioServer(endpoints, {
    authenticate: async (headers) => (USERS[String(headers.authorization)] ? { user: USERS[String(headers.authorization)] } : null),
    identityKey: (identity: Who) => identity.user,
  });
});
afterAll(async () => {
  await server?.close();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('sessions bound to their user', () => {
  it("B with A's session_hash reads none of A's stream (raw HTTP), and A's stream is not taken over", async () => {
    const a = await Client.connect(server.url, { headers: alice });
    const job = a.submit('/secrets', [40]);
    const seen: unknown[] = [];
    const aDone = (async () => {
      for await (const event of job) if (event.type === 'data') seen.push(event.data[0]);
    })();
    await expect.poll(() => seen.length).toBeGreaterThan(2);

    const stolen = await readRawStream(await fetch(`${server.url}/gradio_api/queue/data?session_hash=${a.session_hash}`, { headers: bob }));
    expect(stolen.raw).not.toContain('alice-secret');
    expect(stolen.frames.map((f) => f.msg)).toEqual(['unexpected_error', 'close_stream']);
    expect(stolen.frames[0].session_not_found).toBe(true);
    const anonymous = await fetch(`${server.url}/gradio_api/queue/data?session_hash=${a.session_hash}`);
    expect(anonymous.status).toBe(401);

    await aDone;
    // A got every value: B's attempt neither read nor replaced A's stream.
    expect(seen.at(-1)).toBe('alice-secret-39');
    a.close();
  });

  it("B's real client using A's session_hash gets a session of its own; both users get only their own values", async () => {
    const a = await Client.connect(server.url, { headers: alice });
    const b = await Client.connect(server.url, { headers: bob });
    b.session_hash = a.session_hash;
    const [ra, rb] = await Promise.all([a.predict('/secrets', [20]), b.predict('/secrets', [20])]);
    expect(ra.data).toEqual(['alice-secret-19']);
    expect(rb.data).toEqual(['bob-secret-19']);
    a.close();
    b.close();
  });
});

describe('events bound to their user', () => {
  it("B cannot cancel A's event by event_id alone, nor with a wrong session_hash; unauthenticated by event_id alone is 401", async () => {
    const { body } = await joinEvent(server.url, { data: [30], fn_index: 1, session_hash: 'alice-sh' }, alice);
    const eventId = body.event_id as string;
    const stream = fetch(`${server.url}/gradio_api/queue/data?session_hash=alice-sh`, { headers: alice }).then((r) => readRawStream(r));

    const byId = await post('/gradio_api/cancel', { event_id: eventId }, bob);
    expect(byId.status).toBe(200); // Gradio's answer, whatever the event: nothing to learn
    expect((await post('/gradio_api/cancel', { event_id: eventId, session_hash: 'bob-sh' }, bob)).status).toBe(200);
    expect((await post('/gradio_api/cancel', { event_id: eventId })).status).toBe(401);
    expect((await post('/gradio_api/reset', { event_id: eventId })).status).toBe(401);

    const { frames } = await stream;
    const done = frames.find((f) => f.msg === 'process_completed');
    expect(done).toMatchObject({ success: true, output: { data: ['alice-secret-29'] } });
    expect(aborted.has(eventId)).toBe(false);
  });

  it('the owner cancels by identity; anyone holding both session_hash and event_id cancels (the issue 9 decision)', async () => {
    const own = await joinEvent(server.url, { data: [500], fn_index: 1, session_hash: 'alice-own' }, alice);
    const ownStream = fetch(`${server.url}/gradio_api/queue/data?session_hash=alice-own`, { headers: alice }).then((r) => readRawStream(r));
    await sleep(50);
    expect((await post('/gradio_api/cancel', { event_id: own.body.event_id }, alice)).status).toBe(200);
    await ownStream;
    await expect.poll(() => aborted.has(own.body.event_id)).toBe(true);

    const pair = await joinEvent(server.url, { data: [500], fn_index: 1, session_hash: 'alice-pair' }, alice);
    const pairStream = fetch(`${server.url}/gradio_api/queue/data?session_hash=alice-pair`, { headers: alice }).then((r) => readRawStream(r));
    await sleep(50);
    const cancel = await post('/gradio_api/cancel', { event_id: pair.body.event_id, session_hash: 'alice-pair', fn_index: 1 });
    expect(cancel.status).toBe(200);
    expect((await post('/gradio_api/reset', { event_id: pair.body.event_id })).status).toBe(200);
    await pairStream;
    await expect.poll(() => aborted.has(pair.body.event_id)).toBe(true);
  });

  it('the JS client given token: (no Authorization on cancel/reset) cancels its own event', async () => {
    const client = await Client.connect(server.url, { token: 'hf_alice' as `hf_${string}`, events: ['data', 'status'] });
    const before = aborted.size;
    const job = client.submit('/secrets', [1000]);
    let data = 0;
    for await (const event of job) {
      if (event.type === 'data' && ++data === 3) await job.cancel();
    }
    await expect.poll(() => aborted.size).toBe(before + 1);
    expect(data).toBeLessThan(1000);
    client.close();
  });
});
