import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offlineModelRoutes } from '../../../../../server/agent/offline-model/routes.ts';

const app = Fastify();
beforeAll(async () => {
  await app.register(offlineModelRoutes, { prefix: '/m', delayMs: 0 });
  await app.ready();
});
afterAll(() => app.close());

const tools = [{ type: 'function', function: { name: 'check_health', parameters: { type: 'object', properties: { service: { type: 'string' } } } } }];

describe('offline model routes', () => {
  it('lists its model', async () => {
    const r = await app.inject({ method: 'GET', url: '/m/v1/models' });
    expect(r.json().data[0].id).toBe('airlock-offline-1');
  });

  it('answers a non-streamed tool call', async () => {
    const r = await app.inject({ method: 'POST', url: '/m/v1/chat/completions', payload: { model: 'x', messages: [{ role: 'user', content: 'health of payments-api' }], tools } });
    const body = r.json();
    expect(body.id).toMatch(/^chatcmpl-/);
    expect(body.choices[0].message.tool_calls[0].function).toEqual({ name: 'check_health', arguments: '{"service":"payments-api"}' });
  });

  it('streams SSE with usage and [DONE]', async () => {
    const r = await app.inject({ method: 'POST', url: '/m/v1/chat/completions', payload: { messages: [{ role: 'user', content: 'hello' }], stream: true, stream_options: { include_usage: true } } });
    expect(r.headers['content-type']).toBe('text/event-stream');
    const events = r.body.split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toMatch(/^Hello! I'm the Airlock/);
    expect(chunks.at(-1).usage.total_tokens).toBeGreaterThan(0);
  });

  it('serves embeddings in input order', async () => {
    const r = await app.inject({ method: 'POST', url: '/m/v1/embeddings', payload: { input: ['a b', 'c'] } });
    expect(r.json().data.map((d: { index: number }) => d.index)).toEqual([0, 1]);
  });

  it('rejects a request without messages', async () => {
    const r = await app.inject({ method: 'POST', url: '/m/v1/chat/completions', payload: {} });
    expect(r.statusCode).toBe(400);
  });
});
