/** The Origin check of the refresh cookie, from a table, and the refresh-token shape. */
import { describe, expect, it } from 'vitest';
import { originAllowed } from '../../../../../server/api/auth/session-cookie.ts';
import { parseRefreshToken } from '../../../../../server/auth/refresh.ts';

describe('originAllowed', () => {
  const ours = 'https://chat.example.com';
  it.each([
    ['https://chat.example.com', true],
    ['https://chat.example.com:443', true], // the default port is the same origin
    ['https://CHAT.example.com', true],
    ['http://chat.example.com', false], // another scheme is another origin
    ['https://chat.example.com:8443', false],
    ['https://chat.example.com.evil.example', false],
    ['https://evil.example', false],
    ['null', false], // sandboxed iframes, file: pages
    ['', false],
    [undefined, false],
    ['not a url', false],
  ])('%s -> %s', (origin, allowed) => {
    expect(originAllowed(origin, ours)).toBe(allowed);
  });
});

describe('parseRefreshToken', () => {
  const id = '0b6f2f7e-4a53-4a57-9d0b-1c2d3e4f5a6b';
  it.each([
    [`${id}.${'a'.repeat(43)}`, true],
    [`${id}.${'a'.repeat(42)}`, false],
    [`${id}.${'a'.repeat(43)}.x`, false],
    [`${id}`, false],
    ['', false],
    [undefined, false],
  ])('%s -> %s', (token, ok) => {
    expect(parseRefreshToken(token) !== null).toBe(ok);
  });
});
