import { describe, expect, it } from 'vitest';
import { mayCancel, sessionKey, type CancelClaim, type EventOwnership } from '../../../../server/gradio/ownership.ts';

describe('sessionKey', () => {
  it('scopes a session hash by its owner, unambiguously', () => {
    expect(sessionKey('abc', null)).toBe('abc');
    expect(sessionKey('abc', 'u1')).not.toBe(sessionKey('abc', 'u2'));
    // owner "a:b" + hash "c" must not equal owner "a" + hash "b:c"
    expect(sessionKey('c', 'a:b')).not.toBe(sessionKey('b:c', 'a'));
  });
});

describe('mayCancel (issue 9 decision)', () => {
  const bound: EventOwnership = { owner: 'alice', sessionHash: 'sh-a' };
  const unbound: EventOwnership = { owner: null, sessionHash: 'sh-x' };
  it.each<[string, EventOwnership, CancelClaim, boolean]>([
    ['the owner by identity, event_id alone', bound, { owner: 'alice' }, true],
    ['the owner with a wrong session', bound, { owner: 'alice', sessionHash: 'other' }, true],
    ['anyone presenting the session_hash + event_id pair', bound, { owner: null, sessionHash: 'sh-a' }, true],
    ['another user by event_id alone', bound, { owner: 'bob' }, false],
    ['another user with a wrong session_hash', bound, { owner: 'bob', sessionHash: 'sh-b' }, false],
    ['an unauthenticated caller by event_id alone', bound, { owner: null }, false],
    ['unbound app: event_id alone (upstream capability)', unbound, { owner: null }, true],
    ['unbound app: a matching session_hash', unbound, { owner: null, sessionHash: 'sh-x' }, true],
    ['unbound app: a wrong session_hash', unbound, { owner: null, sessionHash: 'nope' }, false],
  ])('%s -> %s', (_name, event, claim, expected) => {
    expect(mayCancel(event, claim)).toBe(expected);
  });
});
