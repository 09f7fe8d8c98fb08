/**
 * The real @gradio/client 2.7.0 against the gradio plugin on loopback: connect, view_api, predict,
 * streaming with diffs, the three call shapes, errors, cancel, raw wire checks.
 */
import { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyOps } from '../../server/gradio/diff.ts';
import { EndpointError, type EndpointDefinition, type EndpointRequest } from '../../server/gradio/index.ts';
import { joinEvent, readRawStream, sleep, startGradioServer, type GradioTestServer } from './gradio-server.ts';

const calls: EndpointRequest[] = [];
const aborted: string[] = [];
const json = { label: 'Response', component: 'json' };

const endpoints: EndpointDefinition[] = [
  {
    apiName: 'echo',
    inputs: [
      { name: 'message', label: 'Message', component: 'textbox' },
      { name: 'suffix', label: 'Suffix', component: 'textbox', default: '!' },
    ],
    outputs: [json],
    handler: async ({ data }) => [`${data[0]}${data[1]}`],
  },
  {
    apiName: 'stream',
    inputs: [{ name: 'count', label: 'Count', component: 'number', default: 200 }],
    outputs: [json],
    async *handler({ data }) {
      let content = '';
      for (let i = 0; i < (data[0] as number); i++) {
        const token = `w${i} `;
        content += token;
        yield [{ role: 'assistant', content, metadata: { type: 'stream_token', token } }];
        if (i % 25 === 0) await sleep(1);
      }
    },
  },
  {
    apiName: 'shapes',
    inputs: [
      { name: 'text', label: 'Text', component: 'textbox', default: '' },
      { name: 'files', label: 'Files', component: 'json', type: { type: 'array' }, default: [] },
    ],
    outputs: [json],
    handler: async (request) => {
      calls.push(request);
      return [{ data: request.data, eventData: request.eventData, identity: request.identity }];
    },
  },
  {
    apiName: 'fail',
    inputs: [],
    outputs: [json],
    async *handler() {
      yield ['partial'];
      throw new EndpointError('kaboom', { title: 'Broken' });
    },
  },
  {
    apiName: 'slow',
    inputs: [],
    outputs: [json],
    async *handler({ signal, eventId }) {
      let content = '';
      try {
        while (!signal.aborted) {
          content += 'x';
          yield [content];
          await sleep(10);
        }
      } finally {
        if (signal.aborted) aborted.push(eventId);
      }
    },
  },
];

let server: GradioTestServer;
beforeAll(async () => {
  server = await startGradioServer(endpoints);
});
afterAll(async () => {
  await server?.close();
});

describe('@gradio/client against the gradio plugin', () => {
  it('connects and describes the endpoints through view_api', async () => {
    const client = await Client.connect(server.url);
    const api = (await client.view_api()) as any;
    expect(Object.keys(api.named_endpoints)).toEqual(['/echo', '/stream', '/shapes', '/fail', '/slow']);
    expect(api.named_endpoints['/echo'].parameters.map((p: any) => [p.parameter_name, p.parameter_has_default])).toEqual([
      ['message', false],
      ['suffix', true],
    ]);
    expect(client.config?.root).toBe(server.url);
  });

  it('predicts with positional and keyword arguments, defaults applied', async () => {
    const client = await Client.connect(server.url);
    expect((await client.predict('/echo', ['hi'])).data).toEqual(['hi!']);
    expect((await client.predict('/echo', ['hi', '?'])).data).toEqual(['hi?']);
    expect((await client.predict('/echo', { message: 'kw' })).data).toEqual(['kw!']);
  });

  it('streams many yields: data and status events, values rebuilt from diffs', async () => {
    const client = await Client.connect(server.url, { events: ['data', 'status'] });
    const data: any[] = [];
    const stages: string[] = [];
    for await (const event of client.submit('/stream', [300])) {
      if (event.type === 'data') data.push(structuredClone(event.data[0]));
      if (event.type === 'status') stages.push(event.stage);
    }
    expect(data).toHaveLength(301); // 300 yields + the completion's full value
    data.slice(0, 300).forEach((value, i) => {
      expect(value.metadata.token).toBe(`w${i} `);
      expect(value.content.length).toBe(Array.from({ length: i + 1 }, (_, j) => `w${j} `).join('').length);
    });
    expect(data[300]).toEqual(data[299]);
    expect(stages[0]).toBe('pending');
    expect(stages).toContain('generating');
    expect(stages.at(-1)).toBe('complete');
  });

  it('sends the first value whole, then append diffs of constant size, then full values', async () => {
    const { status, body } = await joinEvent(server.url, { data: [500], fn_index: 2, session_hash: 'wire-1' });
    expect(status).toBe(200);
    expect(body.event_id).toMatch(/^[0-9a-f]{32}$/);
    const response = await fetch(`${server.url}/gradio_api/queue/data?session_hash=wire-1`);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    const { raw, frames } = await readRawStream(response);
    expect(raw).not.toMatch(/^(:|event:|id:)/m);
    expect(frames.map((f) => f.msg).filter((m, i, a) => a[i - 1] !== m)).toEqual([
      'estimation', 'process_starts', 'process_generating', 'process_completed', 'close_stream',
    ]);
    const generating = frames.filter((f) => f.msg === 'process_generating');
    expect(generating).toHaveLength(500);
    expect(generating[0].output.data[0]).toEqual({ role: 'assistant', content: 'w0 ', metadata: { type: 'stream_token', token: 'w0 ' } });
    let value = generating[0].output.data[0];
    for (const [i, frame] of generating.slice(1).entries()) {
      const ops = frame.output.data[0];
      expect(ops[0]).toEqual(['append', ['content'], `w${i + 1} `]);
      value = applyOps(value, ops);
    }
    const completed = frames.find((f) => f.msg === 'process_completed');
    expect(completed.output.data[0]).toEqual(value);
    expect(completed.output.data[0].content.length).toBeGreaterThan(2000);
    // bytes per token stay flat: the last diff frame is no larger than an early one of equal token length
    const lines = raw.split('\n\n').filter((l) => l.includes('process_generating'));
    expect(lines[499].length - lines[11].length).toBeLessThanOrEqual(6);
    expect(lines[499].length).toBeLessThan(250);
  });

  it('delivers the three call shapes, with event_data, to the handler', async () => {
    const client = await Client.connect(server.url);
    calls.length = 0;
    await client.predict('/shapes', ['positional', [{ path: 'p' }]]);
    await client.predict('/shapes', { text: 'keyword' });
    const results: any[] = [];
    for await (const event of client.submit('/shapes', { text: 'hello', files: [] }, ['conv-1', null])) {
      if (event.type === 'data') results.push(event.data[0]);
    }
    expect(calls.map((c) => c.data)).toEqual([['positional', [{ path: 'p' }]], ['keyword', []], ['hello', []]]);
    expect(calls.map((c) => c.eventData)).toEqual([null, null, ['conv-1', null]]);
    expect(calls[2].identity).toEqual({ user: 'anonymous' });
    expect(calls[2].headers['x-gradio-user']).toBe('api');
    expect(calls[2].sessionHash).toBe(client.session_hash);
    expect(results.at(-1)).toEqual({ data: ['hello', []], eventData: ['conv-1', null], identity: { user: 'anonymous' } });
  });

  it('ends a throwing handler with an error completion and keeps serving', async () => {
    const client = await Client.connect(server.url, { events: ['data', 'status'] });
    await expect(client.predict('/fail', [])).rejects.toMatchObject({ message: 'kaboom' });
    const statuses: any[] = [];
    for await (const event of client.submit('/fail', [])) if (event.type === 'status') statuses.push(event);
    expect(statuses.at(-1)).toMatchObject({ stage: 'error', message: 'kaboom', title: 'Broken', success: false });
    expect((await client.predict('/echo', ['still up'])).data).toEqual(['still up!']);
  });

  it('cancels mid-stream: the handler is aborted, the iterator ends, the next submit works', async () => {
    const client = await Client.connect(server.url, { events: ['data', 'status'] });
    const job = client.submit('/slow', []);
    let seen = 0;
    let last: string | undefined;
    const stages: string[] = [];
    for await (const event of job) {
      if (event.type === 'data') {
        seen++;
        last = event.data[0] as string;
        if (seen === 3) void job.cancel();
      } else if (event.type === 'status') stages.push(event.stage);
    }
    expect(stages.at(-1)).toBe('complete');
    expect(last!.length).toBeGreaterThanOrEqual(3);
    await expect.poll(() => aborted.length).toBe(1);
    const next: string[] = [];
    for await (const event of client.submit('/echo', ['again'])) if (event.type === 'data') next.push(event.data[0] as string);
    expect(next).toEqual(['again!']);
  });

  it('answers a stream for an unknown session with session_not_found, then close_stream', async () => {
    const response = await fetch(`${server.url}/gradio_api/queue/data?session_hash=never-joined`);
    expect(response.status).toBe(200);
    const { frames } = await readRawStream(response);
    expect(frames).toEqual([
      { msg: 'unexpected_error', event_id: null, message: 'Session not found.', session_not_found: true, success: false },
      { msg: 'close_stream', event_id: null },
    ]);
    const python = await fetch(`${server.url}/gradio_api/queue/data?session_hash=never-joined`, { headers: { 'user-agent': 'gradio_client/2.6.0' } });
    expect((await readRawStream(python)).frames).toEqual([{ msg: 'close_stream', event_id: null }]);
  });

  it('buffers messages until the stream connects, and serves /config/ and /info/ with slashes', async () => {
    const { body } = await joinEvent(server.url, { data: ['late'], fn_index: 1, session_hash: 'late-1' });
    await sleep(50);
    const { frames } = await readRawStream(await fetch(`${server.url}/gradio_api/queue/data?session_hash=late-1`));
    expect(frames.map((f) => f.msg)).toEqual(['estimation', 'process_starts', 'process_completed', 'close_stream']);
    expect(frames[2]).toEqual({ msg: 'process_completed', event_id: body.event_id, success: true, output: { data: ['late!'], is_generating: false } });
    for (const path of ['/config/', '/gradio_api/info/']) expect((await fetch(server.url + path)).status).toBe(200);
    expect(await (await fetch(`${server.url}/gradio_api/app_id`)).json()).toHaveProperty('app_id');
  });

  it('computes root from X-Forwarded-Host/Proto', async () => {
    const config = await (await fetch(`${server.url}/config`, { headers: { 'x-forwarded-host': 'chat.example.com', 'x-forwarded-proto': 'https' } })).json();
    expect(config.root).toBe('https://chat.example.com/api/agent/gradio');
    expect(config.run_history).toBe(false);
  });

  it('runs unqueued through /gradio_api/run/{api_name}', async () => {
    const response = await fetch(`${server.url}/gradio_api/run/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: ['direct'] }) });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ data: ['direct!'], is_generating: false });
    const failed = await fetch(`${server.url}/gradio_api/run/fail`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"data":[]}' });
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ error: 'kaboom', duration: null, visible: true, title: 'Broken' });
  });
});
