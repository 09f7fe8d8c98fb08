/**
 * Auth, bad input, limits, concurrency, lost clients and shutdown of the gradio plugin, with the
 * real @gradio/client where a client is involved.
 */
import { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointDefinition } from '../../server/gradio/index.ts';
import { joinEvent, readRawStream, sleep, startGradioServer, type GradioTestServer } from './gradio-server.ts';

const TOKEN = 'Bearer good-token';
const json = { label: 'Response', component: 'json' };
const running = { gate: 0 };
const aborted: string[] = [];
let release: () => void = () => {};
let gate = new Promise<void>((r) => (release = r));

const endpoints: EndpointDefinition<{ user: string }>[] = [
  {
    apiName: 'echo',
    inputs: [{ name: 'message', label: 'Message', component: 'textbox' }],
    outputs: [json],
    handler: async ({ data, identity }) => [`${identity.user}: ${data[0]}`],
  },
  {
    apiName: 'gated',
    inputs: [],
    outputs: [json],
    concurrencyLimit: 2,
    queueSize: 4,
    handler: async ({ signal }) => {
      running.gate++;
      try {
        await Promise.race([gate, new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)))]);
        return ['opened'];
      } finally {
        running.gate--;
      }
    },
  },
  {
    apiName: 'tokens',
    inputs: [{ name: 'count', label: 'Count', component: 'number', default: 50 }],
    outputs: [json],
    async *handler({ data }) {
      let text = '';
      for (let i = 0; i < (data[0] as number); i++) {
        text += `t${i} `;
        yield [text];
        if (i % 10 === 0) await sleep(1);
      }
    },
  },
  {
    apiName: 'forever',
    inputs: [],
    outputs: [json],
    async *handler({ signal, eventId }) {
      try {
        for (let i = 0; !signal.aborted; i++) {
          yield [i];
          await sleep(5);
        }
      } finally {
        aborted.push(eventId);
      }
    },
  },
  {
    // Records which of its two signals fired: the connection, or the user's cancel.
    apiName: 'watched',
    inputs: [],
    outputs: [json],
    async *handler({ signal, cancelSignal, eventId }) {
      const seen = { connection: false, cancel: false };
      signals.set(eventId, seen);
      signal.addEventListener('abort', () => (seen.connection = true));
      cancelSignal.addEventListener('abort', () => (seen.cancel = true));
      for (let i = 0; !signal.aborted; i++) {
        yield [i];
        await sleep(5);
      }
    },
  },
];
const signals = new Map<string, { connection: boolean; cancel: boolean }>();

let server: GradioTestServer;
beforeAll(async () => {
  server = await startGradioServer(endpoints, {
    authenticate: async (headers) => (headers.authorization === TOKEN ? { user: 'ann' } : null),
    bodyLimit: 64 * 1024,
  });
});
afterAll(async () => {
  release();
  await server?.close();
});

const auth = { authorization: TOKEN };

describe('authentication', () => {
  it('answers 401 in Gradio shape on every route but the heartbeat', async () => {
    const routes: [string, string][] = [
      ['GET', '/config'], ['GET', '/gradio_api/info'], ['POST', '/gradio_api/queue/join'], ['GET', '/gradio_api/queue/data?session_hash=x'],
      ['POST', '/gradio_api/cancel'], ['POST', '/gradio_api/reset'], ['POST', '/gradio_api/upload'], ['GET', '/gradio_api/file=x'], ['POST', '/gradio_api/run/echo'],
    ];
    for (const [method, path] of routes) {
      const response = await fetch(server.url + path, { method, headers: { 'content-type': 'application/json', authorization: 'Bearer bad' }, body: method === 'POST' ? '{}' : undefined });
      expect([path, response.status]).toEqual([path, 401]);
      expect(await response.json()).toEqual({ detail: { error: 'Not authenticated', auth_message: null } });
    }
  });

  it('makes Client.connect fail cleanly without credentials and work with them', async () => {
    await expect(Client.connect(server.url)).rejects.toThrow();
    const client = await Client.connect(server.url, { headers: auth });
    expect((await client.predict('/echo', ['hello'])).data).toEqual(['ann: hello']);
  });

  it('serves the heartbeat without auth: ALIVE at once', async () => {
    const response = await fetch(`${server.url}/gradio_api/heartbeat/abc`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toBe('data: ALIVE\n\n');
    await reader.cancel();
  });
});

describe('bad input', () => {
  it('400 for a missing session_hash or fn_index, 422 with detail for arity, types and unknown fn_index', async () => {
    const cases: [unknown, number, RegExp][] = [
      [{ data: ['x'], fn_index: 1 }, 400, /session_hash/],
      [{ data: ['x'], session_hash: 's' }, 400, /fn_index/],
      [{ data: ['x', 'y'], fn_index: 1, session_hash: 's' }, 422, /takes 1 input value\(s\), got 2/],
      [{ data: [42], fn_index: 1, session_hash: 's' }, 422, /message must be of type "string"/],
      [{ data: [], fn_index: 1, session_hash: 's' }, 422, /No value provided for required parameter: message/],
      [{ data: ['x'], fn_index: 99, session_hash: 's' }, 422, /Unknown fn_index 99/],
    ];
    for (const [body, status, detail] of cases) {
      const result = await joinEvent(server.url, body, auth);
      expect(result.status).toBe(status);
      expect(result.body.detail).toMatch(detail);
    }
    const broken = await joinEvent(server.url, '{not json', auth);
    expect(broken.status).toBe(400);
  });

  it('the JS client surfaces a 422 as a validation error status', async () => {
    const client = await Client.connect(server.url, { headers: auth, events: ['data', 'status'] });
    const statuses: any[] = [];
    for await (const event of client.submit('/echo', [12345])) if (event.type === 'status') statuses.push(event);
    expect(statuses.at(-1)).toMatchObject({ stage: 'error', code: 'validation_error' });
    expect(statuses.at(-1).message).toMatch(/must be of type/);
  });

  it("gives the Python client a 422 as Gradio's validator list (a string detail crashes it)", async () => {
    // gradio_client 2.6.0 iterates `detail` and calls `.get` on each item: AttributeError on a string.
    const python = { ...auth, 'User-Agent': 'gradio_client/2.6.0' };
    const typed = await joinEvent(server.url, { data: [42], fn_index: 1, session_hash: 'py' }, python);
    expect(typed.status).toBe(422);
    expect(typed.body.detail).toEqual([
      { __type__: 'validate', is_valid: false, message: expect.stringMatching(/message must be of type "string"/), parameter_name: 'message' },
    ]);
    const unknown = await joinEvent(server.url, { data: ['x'], fn_index: 99, session_hash: 'py' }, python);
    expect(unknown.body.detail).toEqual([{ __type__: 'validate', is_valid: false, message: 'Unknown fn_index 99.', parameter_name: 'fn_index' }]);
    const arity = await joinEvent(server.url, { data: ['x', 'y'], fn_index: 1, session_hash: 'py' }, python);
    expect(arity.body.detail).toEqual([expect.objectContaining({ __type__: 'validate', parameter_name: 'data', message: expect.stringMatching(/takes 1 input/) })]);
    // Other status codes keep the string detail (the Python client raises on the status alone).
    expect((await joinEvent(server.url, { data: ['x'], fn_index: 1 }, python)).body.detail).toMatch(/session_hash/);
  });

  it('413 beyond the body limit', async () => {
    const result = await joinEvent(server.url, { data: ['x'.repeat(100 * 1024)], fn_index: 1, session_hash: 's' }, auth);
    expect(result.status).toBe(413);
    expect(result.body.detail).toBeTruthy();
  });
});

describe('limits and lifecycle', () => {
  it('runs at most concurrencyLimit at once, queues the rest with estimations, 503 beyond queueSize', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await joinEvent(server.url, { data: [], fn_index: 2, session_hash: `gate-${i}` }, auth);
      expect(r.status).toBe(200);
      ids.push(r.body.event_id);
    }
    const full = await joinEvent(server.url, { data: [], fn_index: 2, session_hash: 'gate-x' }, auth);
    expect(full.status).toBe(503);
    const client = await Client.connect(server.url, { headers: auth, events: ['data', 'status'] });
    const busy: any[] = [];
    for await (const event of client.submit('/gated', [])) busy.push(event);
    expect(busy.at(-1)).toMatchObject({ stage: 'error', message: expect.stringMatching(/busy/i) });
    await expect.poll(() => running.gate).toBe(2);
    const streams = ids.map((_, i) => fetch(`${server.url}/gradio_api/queue/data?session_hash=gate-${i}`, { headers: auth }).then((r) => readRawStream(r)));
    await sleep(50);
    expect(running.gate).toBe(2);
    release();
    const results = await Promise.all(streams);
    const third = results[2].frames;
    expect(third[0]).toMatchObject({ msg: 'estimation', rank: 0, queue_size: 1 });
    expect(results.every((r) => r.frames.at(-2)?.output?.data?.[0] === 'opened' && r.frames.at(-1).msg === 'close_stream')).toBe(true);
  });

  it('serves 200 concurrent client sessions streaming at once', async () => {
    const clients = await Promise.all(Array.from({ length: 200 }, () => Client.connect(server.url, { headers: auth })));
    const finals = await Promise.all(
      clients.map(async (client, k) => {
        let last: unknown;
        let count = 0;
        for await (const event of client.submit('/tokens', [40 + (k % 5)])) {
          if (event.type !== 'data') continue;
          last = event.data[0];
          count++;
        }
        return { last, count, n: 40 + (k % 5) };
      }),
    );
    for (const { last, count, n } of finals) {
      expect(count).toBe(n + 1);
      expect(last).toBe(Array.from({ length: n }, (_, i) => `t${i} `).join(''));
    }
  });

  it('aborts the handler when the client drops the stream mid-event (no leak)', async () => {
    const { body } = await joinEvent(server.url, { data: [], fn_index: 4, session_hash: 'drop-1' }, auth);
    const controller = new AbortController();
    const response = await fetch(`${server.url}/gradio_api/queue/data?session_hash=drop-1`, { headers: auth, signal: controller.signal });
    await readRawStream(response, (frames) => frames.filter((f) => f.msg === 'process_generating').length >= 3).catch(() => {});
    controller.abort();
    await expect.poll(() => aborted.includes(body.event_id)).toBe(true);
  });

  it('a dropped stream aborts the connection signal only; /cancel and close fire cancelSignal too', async () => {
    // 1. The client goes away: not a cancel.
    const { body } = await joinEvent(server.url, { data: [], fn_index: 5, session_hash: 'drop-2' }, auth);
    const controller = new AbortController();
    const response = await fetch(`${server.url}/gradio_api/queue/data?session_hash=drop-2`, { headers: auth, signal: controller.signal });
    await readRawStream(response, (frames) => frames.filter((f) => f.msg === 'process_generating').length >= 2).catch(() => {});
    controller.abort();
    await expect.poll(() => signals.get(body.event_id)?.connection).toBe(true);
    await sleep(50);
    expect(signals.get(body.event_id)).toEqual({ connection: true, cancel: false });

    // 2. Stop with the real client: both fire.
    const client = await Client.connect(server.url, { headers: { Authorization: TOKEN }, events: ['data', 'status'] });
    const before = new Set(signals.keys());
    const submission = client.submit('/watched', []);
    for await (const event of submission) {
      if (event.type === 'data') {
        await submission.cancel();
        break;
      }
    }
    const eventId = [...signals.keys()].find((k) => !before.has(k))!;
    await expect.poll(() => signals.get(eventId)).toEqual({ connection: true, cancel: true });
    client.close();
  });

  it('aborts events whose stream never connects after the orphan timeout', async () => {
    const short = await startGradioServer(endpoints, { authenticate: async () => ({ user: 'x' }), orphanTimeoutMs: 100 });
    try {
      const { body } = await joinEvent(short.url, { data: [], fn_index: 4, session_hash: 'orphan' });
      await expect.poll(() => aborted.includes(body.event_id)).toBe(true);
    } finally {
      await short.close();
    }
  });

  it('on close ends open events with a terminal error and close_stream, and aborts handlers', async () => {
    const other = await startGradioServer(endpoints, { authenticate: async () => ({ user: 'x' }) });
    const client = await Client.connect(other.url, { events: ['data', 'status'] });
    const events: any[] = [];
    const done = (async () => {
      for await (const event of client.submit('/forever', [])) {
        events.push(event);
        if (events.filter((e) => e.type === 'data').length === 3) void other.close();
      }
    })();
    await done;
    expect(events.at(-1)).toMatchObject({ type: 'status', stage: 'error', title: 'Server stopped' });
    expect(aborted.length).toBeGreaterThan(0);
  });
});
