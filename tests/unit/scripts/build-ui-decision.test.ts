import { describe, expect, it } from 'vitest';
import { buildReason, newestMtime } from '../../../scripts/build-ui-decision.ts';

describe('buildReason', () => {
  it.each([
    [{ outputMtime: null, newestInputMtime: 5 }, 'not built yet'],
    [{ outputMtime: 10, newestInputMtime: 11 }, 'sources changed since the last build'],
    [{ outputMtime: 10, newestInputMtime: 10 }, null],
    [{ outputMtime: 10, newestInputMtime: 3 }, null],
  ])('%o -> %s', (input, expected) => {
    expect(buildReason(input)).toBe(expected);
  });

  it('takes the newest of the input times', () => {
    expect(newestMtime([3, 9, 4])).toBe(9);
    expect(newestMtime([])).toBe(0);
  });
});
