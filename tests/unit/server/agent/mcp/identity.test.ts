/**
 * What an MCP call tells an HTTP tool server (issue 30): nothing by default; with identity "token"
 * a freshly minted token in Authorization, and only inside a call. Never Airlock's own tokens.
 */
import { describe, expect, it, vi } from 'vitest';
import { callHeaders, identityFetch, withCallHeaders } from '../../../../../server/agent/mcp/identity.ts';
import { parseServerEntry, type McpServerConfig } from '../../../../../server/agent/mcp/tools-file.ts';

/** Captures the headers each request would have sent. */
function capture() {
  const sent: Headers[] = [];
  const fake = (async (_url: unknown, init?: RequestInit) => {
    sent.push(new Headers(init?.headers));
    return new Response('{}');
  }) as typeof fetch;
  return { sent, fake };
}

function server(entry: Record<string, unknown>): McpServerConfig {
  const parsed = parseServerEntry({ name: 'tickets', ...entry }, 0);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.server;
}

const call = { userId: '11111111-1111-4111-8111-111111111111', tool: 'create_ticket' };

describe('callHeaders', () => {
  it('an HTTP server with no identity gets none, and nothing is minted', async () => {
    const mint = vi.fn(async () => 'minted');
    expect(await callHeaders(server({ url: 'http://h/mcp' }), call, mint)).toEqual({});
    expect(await callHeaders(server({ command: 'node' }), call, mint)).toEqual({});
    expect(mint).not.toHaveBeenCalled();
  });

  it('identity "token": a token minted for this server, this user and this tool, as Bearer', async () => {
    const mint = vi.fn(async () => 'minted-token');
    expect(await callHeaders(server({ url: 'http://h/mcp', identity: 'token' }), call, mint)).toEqual({ authorization: 'Bearer minted-token' });
    expect(mint).toHaveBeenCalledExactlyOnceWith({ server: 'tickets', userId: call.userId, tool: 'create_ticket' });
  });

  it('identity "token" with no user or no minter fails the call instead of going without', async () => {
    const tokenServer = server({ url: 'http://h/mcp', identity: 'token' });
    await expect(callHeaders(tokenServer, { ...call, userId: null }, async () => 't')).rejects.toThrow(/has no user/);
    await expect(callHeaders(tokenServer, call)).rejects.toThrow(/cannot mint/);
  });
});

describe('identityFetch', () => {
  it('inside a call: the static headers, then the call\'s token, which beats a static Authorization', async () => {
    const { sent, fake } = capture();
    const f = identityFetch({ staticHeaders: { Authorization: 'Bearer pinned', 'X-Tenant': 'acme' }, fetch: fake });
    await withCallHeaders({ authorization: 'Bearer minted' }, () => f('http://x/mcp', { headers: { accept: 'application/json' } }));
    expect(Object.fromEntries(sent[0])).toEqual({ accept: 'application/json', authorization: 'Bearer minted', 'x-tenant': 'acme' });
  });

  it('outside a call (discovery) and in a call of a server without identity: the static headers only', async () => {
    const { sent, fake } = capture();
    const f = identityFetch({ staticHeaders: { 'X-Tenant': 'acme' }, fetch: fake });
    await f('http://x/mcp');
    await withCallHeaders({}, () => f('http://x/mcp'));
    expect(Object.fromEntries(sent[0])).toEqual({ 'x-tenant': 'acme' });
    expect(Object.fromEntries(sent[1])).toEqual({ 'x-tenant': 'acme' });
  });
});
