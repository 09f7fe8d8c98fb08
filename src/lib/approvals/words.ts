/**
 * The approvals inbox's words and small decisions (issue 26 items 1 and 2), pure so that unit tests
 * read them: the title's `(N)` prefix, "1 of 2 approved (by ann)", the time left, and which
 * approvals are new since the last list (what a desktop notification announces).
 * @module
 */

/** A v1 approval object, as the inbox reads it (CONTRACTS §7). */
export interface InboxApproval {
  id: string;
  status: 'pending' | 'approved' | 'denied' | 'expired';
  tool_name: string;
  tool_args: Record<string, unknown>;
  content: string;
  requested_by: string;
  resolved_by: string | null;
  resolution_reason: string | null;
  created_at: string;
  expires_at: string;
  resolved_at: string | null;
  session_id: string;
  policy_action: string;
  policy_scope: string;
  approvals_required: number;
  approved_by: string[];
  decisions: Array<{ user: string; decision: 'approve' | 'deny'; decided_at: string; channel: string }>;
  /** Approving needs the approver's passkey (issue 28 step-up). */
  step_up?: 'passkey' | null;
  /** Human labels of the arguments (issue 27). */
  labels?: Record<string, string>;
  /** The arguments an approver's edit runs instead of tool_args (issue 27 item 1); null: not edited. */
  edited_args?: Record<string, unknown> | null;
  /** Who may approve: the rule's roles and usernames (issue 37 item 4); both empty: the defaults. */
  approvers?: { roles: string[]; users: string[] };
  /** The requester's message that led to the call, at most 500 characters (issue 37 item 4). */
  request_message?: string | null;
}

const PREFIX = /^\(\d+\) /;

/** The document title with `(N) ` in front while N > 0; an old prefix is replaced, never stacked. */
export function titleWithCount(title: string, count: number): string {
  const bare = title.replace(PREFIX, '');
  return count > 0 ? `(${count}) ${bare}` : bare;
}

/** "1 of 2 approved (by ann)"; "Needs 2 approvals" before the first; "" for a one-person approval. */
export function progressText(a: Pick<InboxApproval, 'approvals_required' | 'approved_by'>): string {
  if (a.approvals_required <= 1 && a.approved_by.length === 0) return '';
  if (a.approved_by.length === 0) return `Needs ${a.approvals_required} approvals`;
  return `${a.approved_by.length} of ${a.approvals_required} approved (by ${a.approved_by.join(', ')})`;
}

/** "4 min 05 s left", "12 s left", "Expired". */
export function timeLeft(expiresAt: string, nowMs: number): string {
  const s = Math.floor((Date.parse(expiresAt) - nowMs) / 1000);
  if (s <= 0) return 'Expired';
  if (s < 60) return `${s} s left`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h} h ${String(m).padStart(2, '0')} min left` : `${m} min ${sec} s left`;
}

/** The risk the policy gave the call, in the dry run's words. */
export function riskOf(a: Pick<InboxApproval, 'policy_action'>): 'danger' | 'caution' | 'safe' | 'forbidden' {
  return ({ require_approval: 'danger', caution: 'caution', allow: 'safe', deny: 'forbidden' } as const)[a.policy_action as 'allow'] ?? 'danger';
}

/** The approvals of `next` that `known` did not list (the first list announces nothing). */
export function arrivals(known: ReadonlySet<string> | null, next: readonly InboxApproval[]): InboxApproval[] {
  if (!known) return [];
  return next.filter((a) => !known.has(a.id));
}

/** The conversations with a pending approval (the sidebar's marks). */
export function pendingConversations(pending: readonly InboxApproval[]): Set<string> {
  return new Set(pending.map((a) => a.session_id));
}
