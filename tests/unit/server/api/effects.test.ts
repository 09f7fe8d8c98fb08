import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../../server/api/tools/effects.ts';
import { outcomeFor } from '../../../../server/api/tools/hooks.ts';

describe('canonicalJson (idempotency request hash input)', () => {
  it('ignores key order and undefined values, keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: undefined } })).toBe(canonicalJson({ a: { d: [2, 1] }, b: 1 }));
    expect(canonicalJson({ a: [1, 2] })).not.toBe(canonicalJson({ a: [2, 1] }));
    expect(canonicalJson({ a: '1' })).not.toBe(canonicalJson({ a: 1 }));
  });
});

describe('outcomeFor (audit outcome of a status)', () => {
  it.each([
    [200, false, 'success'],
    [201, true, 'replayed'],
    [401, false, 'unauthorized'],
    [403, false, 'denied'],
    [400, false, 'invalid'],
    [413, false, 'invalid'],
    [404, false, 'not_found'],
    [409, false, 'conflict'],
    [500, false, 'error'],
  ] as const)('%i (replay %s) -> %s', (status, replay, outcome) => {
    expect(outcomeFor(status, replay)).toBe(outcome);
  });
});
