/**
 * What the user reads about approvals: the warning before a message that would supersede a
 * pending one (the server denies it as `superseded_by_new_message`), and a resolved card's label.
 * Pure, so the wording is tested once and the components only render it.
 * @module
 */
import type { ApprovalItem } from './types.ts';

/** The reason the server records for an approval denied because a new message was sent. */
export const SUPERSEDED = 'superseded_by_new_message';
/** The reason of an approval closed because the state changed after it was approved (issue 27): nothing ran. */
export const STATE_CHANGED = 'state_changed';

/** Words of a tool name that say nothing about the action ("deploy_service" is a deploy). */
const FILLER = new Set(['service', 'tool', 'action', 'run']);
/** Input fields that name what the action is about, in order of preference. */
const TARGETS = ['service', 'name', 'environment', 'path', 'id', 'title'];

/** "deploy of checkout-api", "start maintenance of db-primary", "delete file of /srv/a.txt". */
export function pendingActionPhrase(item: Pick<ApprovalItem, 'tool' | 'input'>): string {
  const words = item.tool.split(/[_\s.-]+/).filter((w) => w && !FILLER.has(w.toLowerCase()));
  const action = (words.length ? words : [item.tool]).join(' ').toLowerCase();
  const input = item.input && typeof item.input === 'object' ? (item.input as Record<string, unknown>) : {};
  const key = TARGETS.find((k) => typeof input[k] === 'string' && input[k] !== '');
  return key ? `${action} of ${String(input[key])}` : action;
}

/** The dialog's sentence: what sending now does to the approvals that wait. */
export function supersedeWarning(pending: readonly Pick<ApprovalItem, 'tool' | 'input'>[]): string {
  if (pending.length === 1) return `Sending this will deny the pending ${pendingActionPhrase(pending[0])}.`;
  return `Sending this will deny the ${pending.length} pending actions: ${pending.map(pendingActionPhrase).join(', ')}.`;
}

/**
 * What an edit changed, for people (issue 37 item 3): "environment staging → moon", each changed
 * argument under its label (its first letter small, as mid-sentence), in the proposal's order.
 */
export function changesText(from: Record<string, unknown>, to: Record<string, unknown>, labels: Record<string, string> = {}): string {
  const shown = (v: unknown) => (v === undefined ? '(none)' : typeof v === 'string' ? v : JSON.stringify(v));
  const keys = [...new Set([...Object.keys(from), ...Object.keys(to)])];
  return keys
    .filter((k) => JSON.stringify(from[k]) !== JSON.stringify(to[k]))
    .map((k) => {
      const label = labels[k] ?? k;
      return `${label.charAt(0).toLowerCase()}${label.slice(1)} ${shown(from[k])} → ${shown(to[k])}`;
    })
    .join('; ');
}

/**
 * A decided card's label: the reason, when the server gave one, says why it was denied; who
 * decided, when the server said; "Approved with changes" when the call ran edited arguments (the
 * card then says the changes, not the proposal's question).
 */
export function outcomeLabel(item: Pick<ApprovalItem, 'status' | 'reason' | 'decidedBy' | 'edited'>): string {
  const by = item.decidedBy ? ` by ${item.decidedBy}` : '';
  switch (item.status) {
    case 'confirmed':
      return item.edited ? `Approved with changes${by}` : `Confirmed${by}`;
    case 'expired':
      return 'Expired';
    case 'pending':
      return 'Waiting';
    case 'denied':
      if (item.reason === STATE_CHANGED) return 'Not run: the state changed (asked again below)';
      return item.reason === SUPERSEDED ? 'Denied (new message)' : `Denied${by}`;
  }
}
