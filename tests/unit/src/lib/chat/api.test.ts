import { describe, expect, it, vi } from 'vitest';
import { createApi } from '../../../../../src/lib/chat/api.ts';
import { isApiError } from '../../../../../src/lib/chat/errors.ts';

function respond(status: number, body?: unknown) {
  const fn = vi.fn(async (_url: string, _init?: RequestInit) =>
    new Response(body === undefined ? null : JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } }));
  return fn as typeof fn & typeof fetch;
}

describe('createApi', () => {
  it('sends the bearer token and maps the list shape', async () => {
    const fetch = respond(200, { items: [{ id: 'c1' }], next_cursor: 'abc' });
    const api = createApi({ token: () => 'tok', fetch });
    const page = await api.listConversations({ q: 'latency', archived: false, limit: 30 });
    expect(page).toEqual({ items: [{ id: 'c1' }], next: 'abc' });
    const [url, init] = fetch.mock.calls[0];
    expect(url).toBe('/api/assistant/conversations?q=latency&archived=false&limit=30');
    expect((init!.headers as Record<string, string>).authorization).toBe('Bearer tok');
  });

  it('history pages with before and maps next_before', async () => {
    const fetch = respond(200, { items: [], next_before: null });
    const api = createApi({ token: () => 'tok', fetch });
    expect(await api.history('c 1', 'm5', 20)).toEqual({ items: [], next: null, activeBranch: 0, forks: [] });
    expect(fetch.mock.calls[0][0]).toBe('/api/assistant/history?conversation_id=c+1&before=m5&limit=20');
  });

  it('history reads the branches (issue 29) as forks for the shared branch helpers', async () => {
    const fetch = respond(200, { items: [], next_before: null, active_branch: 1, branch: 1, branches: [{ branch: 1, parent_branch: 0, from_message_seq: 4 }] });
    const api = createApi({ token: () => 'tok', fetch });
    expect(await api.history('c1')).toMatchObject({ activeBranch: 1, forks: [{ branch: 1, parent: 0, from: 4 }] });
  });

  it('switchBranch posts the branch to the conversation', async () => {
    const fetch = respond(200, { conversation_id: 'c1', active_branch: 0, seq: 9 });
    await createApi({ token: () => 'tok', fetch }).switchBranch('c1', 0);
    expect(fetch.mock.calls[0][0]).toBe('/api/agent/conversations/c1/branch');
    expect(fetch.mock.calls[0][1]).toMatchObject({ method: 'POST', body: JSON.stringify({ branch: 0 }) });
  });

  it('maps {error:{code,message}} to ApiError with the taxonomy code', async () => {
    const api = createApi({ token: () => 'tok', fetch: respond(403, { error: { code: 'FORBIDDEN', message: 'no', details: { permission: 'x' } } }) });
    const error = await api.active('c1').catch((e) => e);
    expect(isApiError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'FORBIDDEN', message: 'no', status: 403, details: { permission: 'x' } });
  });

  it('401 calls onUnauthorized (but not for a failed login)', async () => {
    const onUnauthorized = vi.fn();
    const api = createApi({ token: () => 'tok', onUnauthorized, fetch: respond(401, { error: { code: 'UNAUTHORIZED', message: 'expired' } }) });
    await expect(api.me()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(onUnauthorized).toHaveBeenCalledOnce();
    await expect(api.login('a', 'b')).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(onUnauthorized).toHaveBeenCalledOnce();
  });

  it('a 401 renews the token once and retries with it; only a second 401 (or no renewal) signs out', async () => {
    const seen: (string | undefined)[] = [];
    const statuses = [401, 200];
    const fetch = vi.fn(async (_url: string, init?: RequestInit) => {
      seen.push((init!.headers as Record<string, string>).authorization);
      const status = statuses.shift() ?? 401;
      return new Response(JSON.stringify(status === 200 ? { id: 'u1' } : { error: { code: 'UNAUTHORIZED', message: 'x' } }), { status });
    }) as unknown as typeof globalThis.fetch;
    const onUnauthorized = vi.fn();
    const renew = vi.fn(async () => 'new');
    const api = createApi({ token: async () => 'old', renew, onUnauthorized, fetch });
    expect(await api.me()).toEqual({ id: 'u1' });
    expect(seen).toEqual(['Bearer old', 'Bearer new']);
    expect(onUnauthorized).not.toHaveBeenCalled();
    await expect(api.me()).rejects.toMatchObject({ code: 'UNAUTHORIZED' }); // 401, renew, 401 again
    expect(onUnauthorized).toHaveBeenCalledOnce();
    expect(renew).toHaveBeenCalledTimes(2);
    renew.mockResolvedValueOnce(null as never);
    await expect(api.me()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(onUnauthorized).toHaveBeenCalledTimes(2);
  });

  it('login asks for a cookie session; a refused refresh is "no session", never onUnauthorized', async () => {
    const fetch = respond(401, { error: { code: 'UNAUTHORIZED', message: 'No session' } });
    const onUnauthorized = vi.fn();
    const api = createApi({ token: () => null, onUnauthorized, renew: vi.fn(), fetch });
    await expect(api.login('a', 'b')).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(JSON.parse(fetch.mock.calls[0][1]!.body as string)).toEqual({ username: 'a', password: 'b', cookie: true });
    await expect(api.refresh()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(fetch.mock.calls[1][0]).toBe('/api/auth/refresh');
    expect(onUnauthorized).not.toHaveBeenCalled();
  });

  it('a body without a code maps by status; a network failure is status 0', async () => {
    await expect(createApi({ token: () => null, fetch: respond(404, { message: 'x' }) }).active('c')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const offline = (async () => { throw new TypeError('Failed to fetch'); }) as typeof fetch;
    await expect(createApi({ token: () => null, fetch: offline }).me()).rejects.toMatchObject({ status: 0, code: 'GRADIO_UNREACHABLE' });
  });

  it('a 503 (database down), a proxy 502/504 or a network failure keeps the session: no onUnauthorized', async () => {
    const onUnauthorized = vi.fn();
    const down = respond(503, { error: { code: 'SERVICE_UNAVAILABLE', message: 'The service is temporarily unavailable.' } });
    await expect(createApi({ token: () => 't', onUnauthorized, fetch: down }).me()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    for (const [status, code] of [[502, 'GRADIO_UNREACHABLE'], [503, 'SERVICE_UNAVAILABLE'], [504, 'GRADIO_UNREACHABLE']] as const) {
      await expect(createApi({ token: () => 't', onUnauthorized, fetch: respond(status) }).me()).rejects.toMatchObject({ code });
    }
    const offline = (async () => { throw new TypeError('Failed to fetch'); }) as typeof fetch;
    await expect(createApi({ token: () => 't', onUnauthorized, fetch: offline }).me()).rejects.toMatchObject({ status: 0 });
    expect(onUnauthorized).not.toHaveBeenCalled();
  });

  it('reports outages to onOutage (the connection dot), not other failures', async () => {
    const onOutage = vi.fn();
    await createApi({ token: () => 't', onOutage, fetch: respond(503, { error: { code: 'SERVICE_UNAVAILABLE', message: 'x' } }) }).me().catch(() => {});
    const offline = (async () => { throw new TypeError('Failed to fetch'); }) as typeof fetch;
    await createApi({ token: () => 't', onOutage, fetch: offline }).me().catch(() => {});
    await createApi({ token: () => 't', onOutage, fetch: respond(404, { error: { code: 'NOT_FOUND', message: 'x' } }) }).me().catch(() => {});
    await createApi({ token: () => 't', onOutage, fetch: respond(502) }).me().catch(() => {}); // nginx: the upstream is down
    expect(onOutage.mock.calls).toEqual([['unavailable'], ['unreachable'], ['unreachable']]);
  });

  it('204 resolves to undefined (archive)', async () => {
    const fetch = respond(204);
    await expect(createApi({ token: () => 't', fetch }).archiveConversation('c1')).resolves.toBeUndefined();
    expect(fetch.mock.calls[0][1]!.method).toBe('DELETE');
  });
});
