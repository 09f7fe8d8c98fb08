import { describe, expect, it } from 'vitest';
import { canonicalJson, hashJson } from '../../../server/canonical-json.ts';

describe('canonicalJson', () => {
  it('ignores key order and undefined values, keeps array order and types', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: undefined } })).toBe('{"a":{"d":[2,1]},"b":1}');
    expect(canonicalJson({ a: [1, 2] })).not.toBe(canonicalJson({ a: [2, 1] }));
    expect(canonicalJson({ a: '1' })).not.toBe(canonicalJson({ a: 1 }));
    expect(canonicalJson(undefined)).toBe('null');
  });
});

describe('hashJson', () => {
  it('is a hex SHA-256 that only changes with the content', () => {
    expect(hashJson({ x: 1, y: [1] })).toMatch(/^[0-9a-f]{64}$/);
    expect(hashJson({ x: 1, y: [1] })).toBe(hashJson({ y: [1], x: 1 }));
    expect(hashJson({ x: 1 })).not.toBe(hashJson({ x: 2 }));
  });
});
