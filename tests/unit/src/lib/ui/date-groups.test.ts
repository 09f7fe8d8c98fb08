import { describe, expect, it } from 'vitest';
import { dateGroup, groupHeading } from '../../../../../src/lib/ui/date-groups.ts';

describe('dateGroup', () => {
  const now = new Date(2026, 11, 5, 9, 30).getTime();
  const at = (d: number, h = 12) => new Date(2026, 11, d, h).toISOString();
  it.each([
    [at(5, 0), 'Today'],
    [at(4, 23), 'Yesterday'],
    [at(4, 0), 'Yesterday'],
    [at(3), 'Previous 7 days'],
    [new Date(2026, 10, 28, 1).toISOString(), 'Previous 7 days'],
    [new Date(2026, 10, 27, 23).toISOString(), 'Older'],
  ])('%s -> %s', (iso, group) => expect(dateGroup(iso, now)).toBe(group));
  it('heads each group once in a newest-first list', () => {
    const times = [at(5), at(5, 1), at(4), at(1), at(1)];
    expect(times.map((_, i) => groupHeading(times, i, now))).toEqual(['Today', null, 'Yesterday', 'Previous 7 days', null]);
  });
});
