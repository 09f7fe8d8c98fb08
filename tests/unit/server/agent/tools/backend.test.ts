import { ToolMessage } from '@langchain/core/messages';
import { createToolPolicy } from '../../../../../server/policy/index.ts';
import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../../../server/errors.ts';
import { callBackend, codeForStatus } from '../../../../../server/agent/tools/backend.ts';
import type { ToolContext } from '../../../../../server/agent/tools/context.ts';
import { checkHealth } from '../../../../../server/agent/tools/check-health.ts';
import { deployService } from '../../../../../server/agent/tools/deploy-service.ts';
import { createTask } from '../../../../../server/agent/tools/create-task.ts';
import type { BackendTool } from '../../../../../server/agent/tools/define.ts';
import { builtinToolSource } from '../../../../../server/agent/tools/source.ts';
import { sourceTools } from '../../../../../server/agent/source-tools.ts';

/** The tool as the graph runs it: through the built-in source. */
const asGraphTool = (t: BackendTool) => sourceTools([builtinToolSource([t])])[0];

describe('codeForStatus', () => {
  it.each([
    [401, undefined, 'UNAUTHORIZED'],
    [403, 'FORBIDDEN', 'FORBIDDEN'],
    [403, undefined, 'FORBIDDEN'],
    [500, 'INTERNAL', 'TOOL_FAILURE'],
    [502, undefined, 'TOOL_FAILURE'],
    [503, undefined, 'TOOL_FAILURE'],
    [404, undefined, 'NOT_FOUND'],
    [404, 'NOT_FOUND', 'NOT_FOUND'],
    [409, 'CONFLICT', 'CONFLICT'],
    [400, 'VALIDATION_ERROR', 'VALIDATION_ERROR'],
    [422, undefined, 'VALIDATION_ERROR'],
    [418, 'BOGUS', 'TOOL_FAILURE'],
  ] as const)('%i (%s) -> %s', (status, bodyCode, expected) => expect(codeForStatus(status, bodyCode)).toBe(expected));
});

type Seen = { url: string; init: RequestInit };

function fakeContext(responses: Array<Response | Error>, seen: Seen[] = []): ToolContext & { invalidations: number } {
  let tokens = 0;
  const ctx = {
    apiUrl: 'http://api.test',
    userToken: 'user-jwt',
    user: { id: 'u1', username: 'a', tenant: 'demo' },
    conversationId: 'conv-1',
    timeoutMs: 1000,
    invalidations: 0,
    serviceToken: { get: async () => `svc-${++tokens}`, invalidate: () => void ctx.invalidations++ },
    policy: (tool: string) => createToolPolicy(null).decide({ tenant: 'demo', username: 'a' }, tool),
    fetch: (async (url: string, init: RequestInit) => {
      seen.push({ url, init });
      const next = responses.shift();
      if (next instanceof Error) throw next;
      return next ?? new Response('{}');
    }) as unknown as typeof fetch,
  };
  return ctx;
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('callBackend', () => {
  it('sends both identities, the audit headers and the idempotency key on POST', async () => {
    const seen: Seen[] = [];
    await callBackend(fakeContext([json(200, { ok: true })], seen), { method: 'POST', path: '/api/tools/tasks', body: { title: 't' } }, { toolCallId: 'call_1' });
    expect(seen[0].url).toBe('http://api.test/api/tools/tasks');
    expect(seen[0].init.headers).toMatchObject({
      authorization: 'Bearer svc-1', 'x-user-jwt': 'user-jwt', 'x-tool-call-id': 'call_1', 'x-conversation-id': 'conv-1', 'idempotency-key': 'call_1',
    });
    expect(seen[0].init.body).toBe('{"title":"t"}');
  });

  it('puts defined query values in the URL and no idempotency key on GET', async () => {
    const seen: Seen[] = [];
    await callBackend(fakeContext([json(200, {})], seen), { method: 'GET', path: '/api/tools/health', query: { service: 'a b', x: undefined } }, { toolCallId: 'c' });
    expect(seen[0].url).toBe('http://api.test/api/tools/health?service=a+b');
    expect(seen[0].init.headers).not.toHaveProperty('idempotency-key');
  });

  it('retries once with a fresh service token after a 401', async () => {
    const seen: Seen[] = [];
    const ctx = fakeContext([json(401, {}), json(200, { ok: 1 })], seen);
    expect(await callBackend(ctx, { method: 'GET', path: '/p' }, { toolCallId: 'c' })).toEqual({ ok: 1 });
    expect(ctx.invalidations).toBe(1);
    expect((seen[1].init.headers as Record<string, string>).authorization).toBe('Bearer svc-2');
  });

  it.each([
    ['a second 401', [json(401, {}), json(401, { error: { code: 'UNAUTHORIZED', message: 'bad user' } })], 'UNAUTHORIZED', 'bad user'],
    ['403', [json(403, { error: { code: 'FORBIDDEN', message: 'missing deployments:write' } })], 'FORBIDDEN', 'missing deployments:write'],
    ['500', [json(500, { error: { code: 'INTERNAL', message: 'oops' } })], 'TOOL_FAILURE', 'oops'],
    ['a network error', [new TypeError('fetch failed')], 'TOOL_FAILURE', 'The backend API is unreachable.'],
    ['a non-JSON 502', [new Response('<html>', { status: 502 })], 'TOOL_FAILURE', 'The backend API answered HTTP 502.'],
  ])('maps %s', async (_label, responses, code, message) => {
    const error = await callBackend(fakeContext(responses as Array<Response | Error>), { method: 'GET', path: '/p' }, { toolCallId: 'c' }).catch((e) => e);
    expect(isAirlockError(error)).toBe(true);
    expect(error).toMatchObject({ code, message });
  });

  it('maps a timeout to TOOL_FAILURE', async () => {
    const ctx = fakeContext([]);
    ctx.timeoutMs = 20;
    ctx.fetch = ((_url: string, init: RequestInit) =>
      new Promise((_, reject) => init.signal?.addEventListener('abort', () => reject(init.signal?.reason)))) as unknown as typeof fetch;
    await expect(callBackend(ctx, { method: 'GET', path: '/p' }, { toolCallId: 'c' })).rejects.toMatchObject({ code: 'TOOL_FAILURE', message: 'The backend API timed out after 20 ms.' });
  });

  it('rethrows the run\'s own abort untouched', async () => {
    const ctx = fakeContext([]);
    const run = new AbortController();
    ctx.fetch = ((_url: string, init: RequestInit) =>
      new Promise((_, reject) => init.signal?.addEventListener('abort', () => reject(init.signal?.reason)))) as unknown as typeof fetch;
    const reason = new Error('user cancelled');
    setTimeout(() => run.abort(reason), 5);
    await expect(callBackend(ctx, { method: 'GET', path: '/p' }, { toolCallId: 'c', signal: run.signal })).rejects.toBe(reason);
  });
});

describe('tools', () => {
  const call = (name: string, args: object) => ({ type: 'tool_call' as const, id: 'call_7', name, args });

  it('returns the backend JSON as the tool result', async () => {
    const seen: Seen[] = [];
    const ctx = fakeContext([json(200, { status: 'healthy' })], seen);
    const out = (await asGraphTool(checkHealth as never).invoke(call('check_health', { service: 'payments-api' }), { configurable: { airlock: ctx } })) as ToolMessage;
    expect(out.content).toBe('{"status":"healthy"}');
    expect(seen[0].url).toBe('http://api.test/api/tools/health?service=payments-api');
  });

  it('turns a failure into an error ToolMessage with the code, so the agent carries on', async () => {
    const ctx = fakeContext([json(403, { error: { code: 'FORBIDDEN', message: 'missing tasks:write' } })]);
    const out = (await asGraphTool(createTask as never).invoke(call('create_task', { title: 't' }), { configurable: { airlock: ctx } })) as ToolMessage;
    expect(out).toMatchObject({ status: 'error', tool_call_id: 'call_7', artifact: { code: 'FORBIDDEN' } });
    expect(JSON.parse(String(out.content))).toEqual({ error: { code: 'FORBIDDEN', message: 'missing tasks:write' } });
  });

  it('checks permission before asking for approval: a viewer gets FORBIDDEN and no pause', async () => {
    const seen: Seen[] = [];
    const ctx = fakeContext([json(200, { tools: [{ name: 'deploy_service', allowed: false }] })], seen);
    const out = (await asGraphTool(deployService as never).invoke(call('deploy_service', { service: 's', version: '1', environment: 'staging' }), { configurable: { airlock: ctx } })) as ToolMessage;
    expect(out).toMatchObject({ status: 'error', artifact: { code: 'FORBIDDEN' } });
    expect(seen.map((s) => s.url)).toEqual(['http://api.test/api/tools/capabilities']);
  });

  it('reports a missing run context as INTERNAL', async () => {
    const out = (await asGraphTool(checkHealth as never).invoke(call('check_health', {}), {})) as ToolMessage;
    expect(out).toMatchObject({ status: 'error', artifact: { code: 'INTERNAL' } });
  });
});
