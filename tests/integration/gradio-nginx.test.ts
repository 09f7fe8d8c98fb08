/**
 * The gradio plugin behind the real Debian nginx at /api/agent/gradio with the repository's
 * config: the real client streams through it, tokens arrive one by one (no proxy buffering), no
 * compression on event streams, the upload limit holds, and the test config mirrors production.
 */
import { readFile } from 'node:fs/promises';
import { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointDefinition } from '../../server/gradio/index.ts';
import { NGINX_TEMPLATE, startNginx, type NginxInstance } from '../helpers/nginx.ts';
import { joinEvent, readRawStream, startGradioServer, type GradioTestServer } from './gradio-server.ts';

// Ping-pong: the handler yields token i, then waits until the test has *received* it before
// producing the next. Any buffering between server and client deadlocks this, so it fails fast.
const acks: (() => void)[] = [];
const waitForAck = (i: number) => new Promise<void>((resolve) => (acks[i] = resolve));

const endpoints: EndpointDefinition[] = [
  {
    apiName: 'pingpong',
    inputs: [{ name: 'count', label: 'Count', component: 'number', default: 20 }],
    outputs: [{ label: 'Response', component: 'json' }],
    async *handler({ data, signal }) {
      let text = '';
      for (let i = 0; i < (data[0] as number) && !signal.aborted; i++) {
        text += `tok${i} `;
        const acked = waitForAck(i);
        yield [{ role: 'assistant', content: text }];
        await Promise.race([acked, new Promise((_, reject) => setTimeout(() => reject(new Error(`token ${i} was not delivered within 3 s (buffered?)`)), 3000))]);
      }
    },
  },
  {
    apiName: 'long',
    inputs: [],
    outputs: [{ label: 'Response', component: 'json' }],
    async *handler() {
      let text = '';
      for (let i = 0; i < 400; i++) yield [(text += 'lorem ipsum dolor sit amet ')];
    },
  },
];

let server: GradioTestServer;
let nginx: NginxInstance;
beforeAll(async () => {
  server = await startGradioServer(endpoints, { uploadMaxBytes: 1024 * 1024 });
  nginx = await startNginx({ upstream: Number(new URL(server.origin).port), clientMaxBodySize: '1m' });
});
afterAll(async () => {
  await nginx?.stop();
  await server?.close();
});

describe('behind nginx at /api/agent/gradio', () => {
  it('tells the client the public root (nginx address + prefix) and streams every token unbuffered', async () => {
    const base = `${nginx.url}/api/agent/gradio`;
    const client = await Client.connect(base);
    expect(client.config?.root).toBe(base);
    const received: string[] = [];
    for await (const event of client.submit('/pingpong', [20])) {
      if (event.type !== 'data') continue;
      const content = (event.data[0] as { content: string }).content;
      received.push(content);
      const i = received.length - 1;
      if (i < 20) acks[i]?.();
    }
    expect(received).toHaveLength(21);
    expect(received[20]).toBe(Array.from({ length: 20 }, (_, i) => `tok${i} `).join(''));
  });

  it('sends event streams uncompressed and unbuffered, with the security headers', async () => {
    const base = `${nginx.url}/api/agent/gradio`;
    await joinEvent(base, { data: [], fn_index: 2, session_hash: 'ngx-1' });
    const response = await fetch(`${base}/gradio_api/queue/data?session_hash=ngx-1`, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const { frames } = await readRawStream(response);
    expect(frames.filter((f) => f.msg === 'process_generating')).toHaveLength(400);
    expect(frames.at(-1)).toEqual({ msg: 'close_stream', event_id: null });
  });

  it('rejects uploads beyond client_max_body_size with 413', async () => {
    const form = new FormData();
    form.append('files', new Blob([new Uint8Array(2 * 1024 * 1024)]), 'big.bin');
    const response = await fetch(`${nginx.url}/api/agent/gradio/gradio_api/upload`, { method: 'POST', body: form });
    expect(response.status).toBe(413);
    expect(await response.text()).toMatch(/<center>nginx<\/center>/); // refused by nginx, not the app
    const small = new FormData();
    small.append('files', new Blob(['ok']), 'small.txt');
    const ok = await fetch(`${nginx.url}/api/agent/gradio/gradio_api/upload`, { method: 'POST', body: small });
    expect(ok.status).toBe(200);
  });

  it('keeps the test config gateway location identical to production', async () => {
    const block = (raw: string) => {
      const text = raw.replace(/\{\{CLIENT_MAX_BODY_SIZE\}\}/g, '20m');
      const start = text.indexOf('location /api/agent/gradio/ {');
      return text.slice(start, text.indexOf('}', start) + 1).replace(/\s+/g, ' ');
    };
    const production = await readFile(new URL('../../nginx/nginx.conf', import.meta.url), 'utf8');
    const template = await readFile(NGINX_TEMPLATE, 'utf8');
    expect(block(template)).toBe(block(production));
    expect(block(production)).toContain('proxy_buffering off;');
    expect(block(production)).toContain('gzip off;');
  });
});
