import { describe, expect, it } from 'vitest';
import { createServiceTokenProvider, refreshAt } from '../../../../server/agent/service-token.ts';

function setup(status = 200) {
  let clock = 1_000_000;
  const bodies: unknown[] = [];
  let n = 0;
  const provider = createServiceTokenProvider({
    apiUrl: () => 'http://api.test',
    credentials: { clientId: 'gw', clientSecret: 's3cret' },
    now: () => clock,
    fetch: (async (_url: string, init: RequestInit) => {
      bodies.push(JSON.parse(String(init.body)));
      await new Promise((r) => setTimeout(r, 5));
      return new Response(JSON.stringify({ access_token: `t${++n}`, expires_in: 300 }), { status });
    }) as unknown as typeof fetch,
  });
  return { provider, bodies, tick: (ms: number) => (clock += ms) };
}

describe('service token', () => {
  it('refreshes 30 s before expiry, or at 80 % for short tokens', () => {
    expect(refreshAt(0, 300)).toBe(270_000);
    expect(refreshAt(0, 60)).toBe(48_000);
    expect(refreshAt(0, 10)).toBe(8_000);
  });

  it('fetches once for concurrent callers and caches', async () => {
    const { provider, bodies } = setup();
    expect(await Promise.all([provider.get(), provider.get(), provider.get()])).toEqual(['t1', 't1', 't1']);
    expect(await provider.get()).toBe('t1');
    expect(bodies).toEqual([{ client_id: 'gw', client_secret: 's3cret' }]);
  });

  it('refreshes before expiry and after invalidate()', async () => {
    const { provider, tick } = setup();
    await provider.get();
    tick(269_000);
    expect(await provider.get()).toBe('t1');
    tick(2_000);
    expect(await provider.get()).toBe('t2');
    provider.invalidate();
    expect(await provider.get()).toBe('t3');
  });

  it('maps a refused request to UNAUTHORIZED', async () => {
    const { provider } = setup(401);
    await expect(provider.get()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
