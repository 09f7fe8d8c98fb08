import { describe, expect, it } from 'vitest';
import { bearerToken } from '../../../../server/api/identity.ts';

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
  ] as const)('%j -> %j', (header, token) => {
    expect(bearerToken(header as string | string[] | undefined)).toBe(token);
  });
});
