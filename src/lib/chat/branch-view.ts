/**
 * Branches in the chat pane (issue 29), pure: which item carries a `‹ 1/2 ›` switch, what an Edit
 * or Regenerate leaves on screen while its answer streams, and the stored ids a live run's items
 * learn once it has ended.
 * @module
 */
import type { BranchSwitch } from '../wire/branches.ts';
import type { AnswerItem, ChatItem, UserItem } from './types.ts';

/** Each switch on the first shown item at or after its fork position (an item's `seq`), by item id. */
export function switchesByItem(items: readonly ChatItem[], switches: readonly BranchSwitch[]): Map<string, BranchSwitch> {
  const at = new Map<string, BranchSwitch>();
  for (const s of switches) {
    const item = items.find((i) => i.seq !== undefined && i.seq >= s.from);
    if (item && !at.has(item.id)) at.set(item.id, s);
  }
  return at;
}

/**
 * What stays on screen when message `at` is edited (everything before it) or regenerated
 * (everything up to the user message it answers): the rest belongs to the branch being left.
 */
export function keptBeforeFork(items: readonly ChatItem[], at: string, action: 'edit' | 'regenerate'): ChatItem[] {
  const index = items.findIndex((i) => i.id === at);
  if (index < 0) return items.slice();
  if (action === 'edit') return items.slice(0, index);
  return items.slice(0, items.slice(0, index).findLastIndex((i) => i.kind === 'user') + 1);
}

/**
 * A live run's items with the stored refs of the same messages in `stored` (the last history page).
 * Items keep their own ids, so nothing on screen is rebuilt (an open tool result stays open):
 * cards match by their ids, messages and answers by their order from the end and their text.
 */
export function withStoredRefs(items: readonly ChatItem[], stored: readonly ChatItem[]): ChatItem[] {
  const refs = new Map<ChatItem, { messageId?: string; seq?: number }>();
  for (const kind of ['user', 'answer'] as const) {
    const live = items.filter((i): i is UserItem | AnswerItem => i.kind === kind);
    const kept = stored.filter((i): i is UserItem | AnswerItem => i.kind === kind);
    for (let k = 1; k <= Math.min(live.length, kept.length); k++) {
      const [item, twin] = [live[live.length - k], kept[kept.length - k]];
      if (item.messageId) continue;
      if (twin.kind !== item.kind || twin.text !== item.text) break; // out of step: learn nothing further back
      refs.set(item, { messageId: twin.messageId, seq: twin.seq });
    }
  }
  for (const item of items) {
    if (item.seq !== undefined || (item.kind !== 'tool' && item.kind !== 'approval')) continue;
    const twin = stored.find((s) => s.kind === item.kind && (s.id === item.id || (s.kind === 'tool' && s.callId === item.id)));
    if (twin) refs.set(item, { messageId: twin.messageId, seq: twin.seq });
  }
  return refs.size === 0 ? items.slice() : items.map((i) => (refs.has(i) ? { ...i, ...refs.get(i) } : i));
}
