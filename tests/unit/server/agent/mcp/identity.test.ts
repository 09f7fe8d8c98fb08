import { describe, expect, it } from 'vitest';
import { identityFetch, tokenHeaderValue, withCallIdentity } from '../../../../../server/agent/mcp/identity.ts';

/** Captures the headers each request would have sent. */
function capture() {
  const sent: Headers[] = [];
  const fake = (async (_url: unknown, init?: RequestInit) => {
    sent.push(new Headers(init?.headers));
    return new Response('{}');
  }) as typeof fetch;
  return { sent, fake };
}

describe('identityFetch', () => {
  it('a call sends both tokens under the configured names; the identity beats a static header of the same name', async () => {
    const { sent, fake } = capture();
    const f = identityFetch({ staticHeaders: { 'X-User-JWT': 'forged', 'X-Tenant': 'acme' }, names: { service_header: 'Authorization', user_header: 'X-User-JWT' }, fetch: fake });
    await withCallIdentity({ userToken: 'user-t', serviceToken: async () => 'svc-t' }, () => f('http://x/mcp', { headers: { accept: 'application/json' } }));
    expect(Object.fromEntries(sent[0])).toEqual({ accept: 'application/json', authorization: 'Bearer svc-t', 'x-user-jwt': 'user-t', 'x-tenant': 'acme' });
  });

  it('outside a call (discovery): the service token only, and none when it cannot be had', async () => {
    const { sent, fake } = capture();
    const names = { service_header: 'Authorization', user_header: 'X-User-JWT' };
    await identityFetch({ staticHeaders: {}, names, discoveryServiceToken: async () => 'svc-t', fetch: fake })('http://x/mcp');
    await identityFetch({ staticHeaders: {}, names, discoveryServiceToken: async () => Promise.reject(new Error('api not up')), fetch: fake })('http://x/mcp');
    expect(Object.fromEntries(sent[0])).toEqual({ authorization: 'Bearer svc-t' });
    expect(Object.fromEntries(sent[1])).toEqual({});
  });

  it('null header names send nothing; other names carry the bare token', async () => {
    const { sent, fake } = capture();
    const f = identityFetch({ staticHeaders: {}, names: { service_header: 'X-Service-Token', user_header: null }, fetch: fake });
    await withCallIdentity({ userToken: 'user-t', serviceToken: async () => 'svc-t' }, () => f('http://x/mcp'));
    expect(Object.fromEntries(sent[0])).toEqual({ 'x-service-token': 'svc-t' });
    expect(tokenHeaderValue('authorization', 't')).toBe('Bearer t');
  });
});
