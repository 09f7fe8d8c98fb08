/**
 * The second approver (issue 37 item 4), pure so unit tests read it: after one approval of two,
 * the card and the inbox row say "You approved. Waiting for one more from: operator, or another
 * admin" to whoever approved, and offer them nothing more to press (the server counts nobody
 * twice); "Open the conversation" shows only on the requester's own approvals (More decisions 3:
 * no approver is granted another user's conversation; they read the requester's message instead).
 * @module
 */

/** Who may approve, as the rule names them (roles and usernames); empty: the defaults (an admin or the requester). */
export interface Approvers {
  roles: readonly string[];
  users: readonly string[];
}

export interface Progress {
  approvalsRequired: number;
  approvedBy: readonly string[];
  approvers?: Approvers | null;
}

export interface Me {
  username: string;
  role: string;
}

/** Whether `me` has approved already: then nothing is left for them to press. */
export function approvedAlready(p: Pick<Progress, 'approvedBy'>, me: Me | null): boolean {
  return !!me && p.approvedBy.includes(me.username);
}

/** "operator, or another admin": who may give the missing approvals, `me`'s own role as "another". */
export function whoElse(approvers: Approvers | null | undefined, approvedBy: readonly string[], me: Me): string {
  const users = (approvers?.users ?? []).filter((u) => u !== me.username && !approvedBy.includes(u));
  const roles = approvers?.roles ?? [];
  const others = roles.filter((r) => r !== me.role);
  const names = [...others, ...users];
  if (roles.includes(me.role)) names.push(`another ${me.role}`);
  if (names.length === 0) names.push(roles.length || users.length ? 'nobody else named by the rule' : 'another approver');
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')}, or ${names[names.length - 1]}`;
}

/** "You approved. Waiting for one more from: …" for whoever approved; "" for anyone else or when it is complete. */
export function waitingText(p: Progress, me: Me | null): string {
  if (!me || !approvedAlready(p, me)) return '';
  const missing = p.approvalsRequired - p.approvedBy.length;
  if (missing <= 0) return '';
  return `You approved. Waiting for ${missing === 1 ? 'one more' : `${missing} more`} from: ${whoElse(p.approvers, p.approvedBy, me)}`;
}

/** Whether the inbox row links the conversation: only the requester's own (`requested_by` is `tenant:username`). */
export function ownRequest(requestedBy: string, me: Me | null): boolean {
  return !!me && (requestedBy.split(':')[1] ?? requestedBy) === me.username;
}

/** The requester's message that led to the call, as an approver reads it in the row: at most 500 characters. */
export const REQUEST_MESSAGE_MAX = 500;
export function requestExcerpt(text: string | null | undefined): string {
  if (!text) return '';
  const chars = [...text];
  return chars.length <= REQUEST_MESSAGE_MAX ? text : `${chars.slice(0, REQUEST_MESSAGE_MAX - 1).join('')}…`;
}
