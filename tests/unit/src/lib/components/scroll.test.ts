import { describe, expect, it } from 'vitest';
import { atBottom, scrollAfter, type ListChange } from '../../../../../src/lib/components/scroll.ts';

describe('scrollAfter (where the message list goes when its items change)', () => {
  const change = (c: Partial<ListChange>): ListChange => ({ prepended: false, replaced: false, sent: false, pinned: false, ...c });
  const table: [string, Partial<ListChange>, ReturnType<typeof scrollAfter>][] = [
    ['an older page on top keeps the reader in place', { prepended: true, pinned: true }, 'restore'],
    ['the reader sent a message while scrolled up: to the latest', { sent: true }, 'bottom'],
    ['another conversation opens at its latest', { replaced: true }, 'bottom'],
    ['reading the bottom: the growing answer is followed', { pinned: true }, 'bottom'],
    ['scrolled up while new content arrives: the view stays (and Jump to latest shows)', {}, 'stay'],
  ];
  for (const [name, input, where] of table) it(name, () => expect(scrollAfter(change(input))).toBe(where));

  it('counts the last few lines as the bottom', () => {
    expect(atBottom({ scrollHeight: 2_000, scrollTop: 1_450, clientHeight: 500 })).toBe(true);
    expect(atBottom({ scrollHeight: 2_000, scrollTop: 1_000, clientHeight: 500 })).toBe(false);
  });
});
