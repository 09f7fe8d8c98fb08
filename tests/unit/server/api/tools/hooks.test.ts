import { describe, expect, it } from 'vitest';
import { outcomeFor } from '../../../../../server/api/tools/hooks.ts';

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

describe('outcomeFor a dry run (issue 27)', () => {
  it('a dry run that passed is a preview; one refused keeps its refusal', () => {
    expect(outcomeFor(200, false, true)).toBe('preview');
    expect(outcomeFor(403, false, true)).toBe('denied');
  });
});
