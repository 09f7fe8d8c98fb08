import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../../../../src/lib/chat/errors.ts';
import { Session, safeNext, stillFresh } from '../../../../../src/lib/chat/session.svelte.ts';

function memory() {
  const map = new Map<string, string>();
  return { map, getItem: (k: string) => map.get(k) ?? null, setItem: (k: string, v: string) => void map.set(k, v), removeItem: (k: string) => void map.delete(k) };
}
const user = { id: 'u1', username: 'operator', role: 'operator' };
const result = (token: string, expiresIn = 300) => ({ access_token: token, expires_in: expiresIn, user });

function setup(refresh: () => Promise<ReturnType<typeof result>>) {
  const storage = memory();
  let now = 0;
  const lockNames: string[] = [];
  const locks = { request: <T,>(name: string, cb: () => Promise<T>) => (lockNames.push(name), cb()) };
  const session = new Session({ refresh: vi.fn(refresh), storage, locks, now: () => now });
  return { session, storage, lockNames, tick: (ms: number) => (now += ms) };
}

describe('Session', () => {
  it('a first visit has no session and no flag; sign-in keeps the token in memory and sets only a flag', () => {
    const { session, storage } = setup(async () => result('x'));
    expect(session.hadSession).toBe(false);
    expect(session.token).toBeNull();
    session.signIn(result('tok'));
    expect(session.token).toBe('tok');
    expect(session.user?.username).toBe('operator');
    expect([...storage.map.entries()]).toEqual([['airlock.signed-in', '1']]); // no token in storage
    session.signOut();
    expect(session.token).toBeNull();
    expect(session.hadSession).toBe(false);
  });

  it('fresh() sends the token while fresh and renews it (under the Web Lock) when it runs low', async () => {
    let n = 0;
    const { session, tick, lockNames } = setup(async () => result(`r${++n}`));
    session.signIn(result('tok'));
    tick(200_000);
    expect(await session.fresh()).toBe('tok');
    tick(80_000); // 20 s left of 300: below the 30 s reserve
    expect(await session.fresh()).toBe('r1');
    expect(lockNames).toEqual(['airlock.refresh']);
  });

  it('concurrent renewals in one tab make one request', async () => {
    const refresh = vi.fn(async () => result('new'));
    const session = new Session({ refresh, storage: memory(), locks: null });
    const tokens = await Promise.all([session.renew(), session.renew(), session.fresh()]);
    expect(tokens).toEqual(['new', 'new', 'new']);
    expect(refresh).toHaveBeenCalledOnce();
  });

  it('UNAUTHORIZED from refresh means no session; a network failure keeps the current token', async () => {
    const outcomes: (() => Promise<ReturnType<typeof result>>)[] = [
      async () => Promise.reject(new ApiError('GRADIO_UNREACHABLE', 'down', 0)),
      async () => Promise.reject(new ApiError('UNAUTHORIZED', 'No session', 401)),
    ];
    const session = new Session({ refresh: () => outcomes.shift()!(), storage: memory(), locks: null });
    session.signIn(result('tok'));
    expect(await session.renew()).toBe('tok');
    expect(await session.renew()).toBeNull();
    expect(session.token).toBeNull();
  });
});

describe('stillFresh', () => {
  it.each([
    [100_000, 300_000, 0, true],
    [100_000, 300_000, 70_001, false], // < 30 s left
    [5_000, 5_000, 3_000, true], // short tokens keep a quarter in reserve
    [5_000, 5_000, 4_000, false],
    [0, 0, 0, false],
  ])('expires %i (ttl %i) at %i -> %s', (expiresAt, ttl, now, fresh) => expect(stillFresh(expiresAt, ttl, now)).toBe(fresh));
});

describe('safeNext', () => {
  it.each([
    ['/c/123?x=1', '/c/123?x=1'],
    [null, '/'],
    ['https://evil.example', '/'],
    ['//evil.example', '/'],
    ['/login?next=/', '/'],
  ])('%s -> %s', (input, out) => expect(safeNext(input)).toBe(out));
});
