/**
 * Issue 30 finding 12: the curl call API repeats the whole output in every `generating` event (as
 * upstream does). A long answer streamed token by token outran the socket, the SSE writer's 8 MB
 * buffer filled, and the stream was cut with no terminal event (a 200 KB answer after 1 frame).
 * Now the writer waits for the client (a queued snapshot is replaced by the newer one) and the
 * stream always ends with `complete`; one event past `callStreamMaxBytes` (CALL_STREAM_MAX_BYTES)
 * ends it with `event: error`, code PAYLOAD_TOO_LARGE, and aborts the event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointDefinition } from '../../server/gradio/index.ts';
import { startGradioServer, type GradioTestServer } from './gradio-server.ts';

const ANSWER_BYTES = 200 * 1024;
const TOKEN = 'lorem ipsum dolor sit amet, '.repeat(4); // 112 bytes: ~1,800 events
const aborted: string[] = [];

const endpoints: EndpointDefinition[] = [
  {
    apiName: 'long',
    inputs: [],
    outputs: [{ label: 'Response', component: 'textbox' }],
    async *handler({ signal, eventId }) {
      let text = '';
      try {
        while (text.length < ANSWER_BYTES && !signal.aborted) {
          text += TOKEN;
          yield [text];
        }
      } finally {
        if (signal.aborted) aborted.push(eventId);
      }
    },
  },
  {
    // Still running when the cap is hit (paced by the event loop), up to a safety bound.
    apiName: 'endless',
    inputs: [],
    outputs: [{ label: 'Response', component: 'textbox' }],
    async *handler({ signal, eventId }) {
      let text = '';
      try {
        while (text.length < 8 * ANSWER_BYTES && !signal.aborted) {
          text += TOKEN;
          yield [text];
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
      } finally {
        if (signal.aborted) aborted.push(eventId);
      }
    },
  },
];

let plain: GradioTestServer;
let capped: GradioTestServer;

beforeAll(async () => {
  plain = await startGradioServer(endpoints);
  capped = await startGradioServer(endpoints, { callStreamMaxBytes: 64 * 1024 });
});
afterAll(async () => {
  await plain?.close();
  await capped?.close();
});

/** POST /call/long, then the whole GET stream as named events. */
async function call(server: GradioTestServer, api = 'long'): Promise<{ eventId: string; events: { event: string; data: any }[] }> {
  const posted = await fetch(`${server.url}/gradio_api/call/${api}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: [] }) });
  const { event_id: eventId } = (await posted.json()) as { event_id: string };
  const raw = await (await fetch(`${server.url}/gradio_api/call/${api}/${eventId}`)).text();
  const events = raw
    .split('\n\n')
    .filter((b) => b.startsWith('event: '))
    .map((b) => {
      const [eventLine, dataLine] = b.split('\n');
      return { event: eventLine.slice(7), data: JSON.parse(dataLine.slice(6)) };
    });
  return { eventId, events };
}

describe('call API stream of a long answer (issue 30 finding 12)', () => {
  it('is never cut: a 200 KB answer streamed token by token ends with complete and the whole text', async () => {
    const { events } = await call(plain);
    expect(events.at(-1)?.event).toBe('complete');
    const answer = events.at(-1)!.data[0] as string;
    expect(answer.length).toBeGreaterThanOrEqual(ANSWER_BYTES);
    expect(answer).toBe(TOKEN.repeat(answer.length / TOKEN.length));
    // Every generating event still holds a whole prefix of the answer, growing.
    const generating = events.filter((e) => e.event === 'generating').map((e) => e.data[0] as string);
    expect(generating.length).toBeGreaterThan(0);
    for (let i = 1; i < generating.length; i++) expect(generating[i].length).toBeGreaterThan(generating[i - 1].length);
  });

  it('past callStreamMaxBytes ends with event: error PAYLOAD_TOO_LARGE, and the event is aborted', async () => {
    for (const api of ['long', 'endless']) {
      const { events } = await call(capped, api);
      expect(events.at(-1)).toMatchObject({ event: 'error', data: { code: 'PAYLOAD_TOO_LARGE' } });
    }
    const { eventId, events } = await call(capped, 'endless');
    const last = events.at(-1)!;
    expect(last.event).toBe('error');
    expect(last.data).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', error: expect.stringContaining('65536') });
    expect(events.filter((e) => e.event === 'complete')).toEqual([]);
    for (const e of events.slice(0, -1)) expect(JSON.stringify(e.data).length).toBeLessThanOrEqual(64 * 1024);
    await expect.poll(() => aborted.includes(eventId), { timeout: 3000 }).toBe(true);
  });
});
