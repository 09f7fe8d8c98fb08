/**
 * Where the message list goes when its items change (issue 23 item 6), as a pure decision:
 * - `restore`: older messages were put on top: keep what the reader reads where it is;
 * - `bottom`: to the latest: the reader sent a message, opened another conversation, or was
 *   already reading the bottom (the answer is followed as it grows);
 * - `stay`: the reader scrolled up to read: leave the view alone, and offer "Jump to latest".
 * @module
 */

export interface ListChange {
  /** Items were added before the first one (an older page). */
  prepended: boolean;
  /** The list is another one (the first item changed and the old one is gone). */
  replaced: boolean;
  /** The last item is a user message that was not the last before: the reader just sent it. */
  sent: boolean;
  /** The reader was at the bottom before the change. */
  pinned: boolean;
}

export function scrollAfter(change: ListChange): 'restore' | 'bottom' | 'stay' {
  if (change.prepended) return 'restore';
  if (change.sent || change.replaced || change.pinned) return 'bottom';
  return 'stay';
}

/** Close enough to the bottom to count as reading it (a few lines of slack). */
export function atBottom(el: { scrollHeight: number; scrollTop: number; clientHeight: number }, slackPx = 80): boolean {
  return el.scrollHeight - el.scrollTop - el.clientHeight < slackPx;
}
