import { describe, expect, it } from 'vitest';
import { bearerToken } from '../../../../server/auth/index.ts';

describe('bearerToken', () => {
  it.each([
    ['Bearer abc.def.ghi', 'abc.def.ghi'],
    ['bearer   abc', 'abc'],
    ['Basic abc', null],
    ['Bearer', null],
    ['Bearer a b', null],
    ['', null],
    [undefined, null],
    [['Bearer a', 'Bearer b'], null],
    ['Bearer a, Bearer b', null], // the JS client's token + header, comma-joined: ambiguous
  ] as const)('%j -> %j', (header, token) => {
    expect(bearerToken(header as string | string[] | undefined)).toBe(token);
  });
});
