import { describe, expect, it } from 'vitest';
import { Session, safeNext } from '../../../../../src/lib/chat/session.svelte.ts';

function memory() {
  const map = new Map<string, string>();
  return { getItem: (k: string) => map.get(k) ?? null, setItem: (k: string, v: string) => void map.set(k, v), removeItem: (k: string) => void map.delete(k) };
}
const login = { access_token: 'tok', expires_in: 3600, user: { id: 'u1', username: 'operator', role: 'operator' } };

describe('Session', () => {
  it('keeps the token for the session (sessionStorage) until it expires', () => {
    const storage = memory();
    new Session(storage, 0).signIn(login, 0);
    expect(new Session(storage, 1_000).token).toBe('tok');
    expect(new Session(storage, 1_000).user?.username).toBe('operator');
    expect(new Session(storage, 3_600_001).token).toBeNull();
  });
  it('sign out forgets it', () => {
    const storage = memory();
    const s = new Session(storage, 0);
    s.signIn(login, 0);
    s.signOut();
    expect(s.token).toBeNull();
    expect(new Session(storage, 0).token).toBeNull();
  });
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
