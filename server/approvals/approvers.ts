/**
 * Who may see and decide an approval, and when its decisions end it (issue 26, M-of-N). Pure:
 * the decision step (decide.ts) applies it under the approval's row lock, and the decision service
 * (service.ts) asks it first for a clear 404 or 403.
 *
 * - Terms come from the policy rule that paused the call (`approvals: {count, roles?, users?,
 *   distinct_from_requester?}`). No roles and no users: the default approvers, the requester and
 *   any admin of the tenant.
 * - Visible: the requester, anyone with approvals:decide in the tenant, and the named approvers.
 *   Invisible is 404, visible but not allowed is 403.
 * - The requester may always deny their own request; distinct_from_requester stops them approving.
 * - Any denial ends it; it is approved once `count` distinct approvers approved.
 * - Escalation routes as well as notifies: once the rule's `escalate.after_s` passed with the
 *   approval still pending, its `escalate.roles` may see and decide it too (`termsAt`).
 * @module
 */
import { roleAllows } from '../auth/index.ts';

/** Where a decision came in (on each decision and its audit row). */
export const DECISION_CHANNELS = ['link', 'inbox', 'chat', 'v1', 'ag-ui', 'mcp'] as const;
export type DecisionChannel = (typeof DECISION_CHANNELS)[number];

export interface ApproverTerms {
  required: number;
  roles: readonly string[];
  users: readonly string[];
  distinctFromRequester: boolean;
  /** Roles that may also decide since the approval escalated (set by `termsAt`, never stored). */
  escalated?: readonly string[];
}

export const DEFAULT_TERMS: ApproverTerms = { required: 1, roles: [], users: [], distinctFromRequester: false };

export interface Person {
  id: string;
  username: string;
  role: string;
  tenant: string;
}

export interface Requester {
  id: string;
  tenant: string;
}

const named = (terms: ApproverTerms) => terms.roles.length > 0 || terms.users.length > 0;
const isNamed = (terms: ApproverTerms, p: Person) => terms.roles.includes(p.role) || terms.users.includes(p.username);
const isAdmin = (p: Person) => roleAllows({ role: p.role, permission: 'approvals:decide' });
const isEscalatedTo = (terms: ApproverTerms, p: Person) => terms.escalated?.includes(p.role) ?? false;

/**
 * Pure: the terms in force at `now`. Once `escalate.after_s` passed since the approval opened, the
 * rule's escalation roles join its approvers (the notification that says so links them too). The
 * inbox's SQL filter states the same moment (db/escalation.ts).
 */
export function termsAt(terms: ApproverTerms, escalate: { afterS: number; roles: readonly string[] } | null, createdAt: Date, now: Date): ApproverTerms {
  if (!escalate || escalate.roles.length === 0 || now.getTime() < createdAt.getTime() + escalate.afterS * 1000) return terms;
  return { ...terms, escalated: escalate.roles };
}

/** May `person` approve? */
export function mayApprove(terms: ApproverTerms, person: Person, requester: Requester): boolean {
  if (person.tenant !== requester.tenant) return false;
  const own = person.id === requester.id;
  if (own && terms.distinctFromRequester) return false;
  if (isEscalatedTo(terms, person)) return true;
  if (!named(terms)) return own || isAdmin(person);
  return isNamed(terms, person);
}

/** May `person` deny? The requester always; otherwise whoever may approve. */
export function mayDeny(terms: ApproverTerms, person: Person, requester: Requester): boolean {
  if (person.tenant !== requester.tenant) return false;
  return person.id === requester.id || mayApprove(terms, person, requester);
}

/** May `person` see it (else it is not found)? */
export function mayView(terms: ApproverTerms, person: Person, requester: Requester): boolean {
  if (person.tenant !== requester.tenant) return false;
  return person.id === requester.id || isAdmin(person) || (named(terms) && isNamed(terms, person)) || isEscalatedTo(terms, person);
}

/** Pure: the refusal for `person` deciding, or null when they may. 404 when they may not even see it. */
export function decisionRefusal(terms: ApproverTerms, person: Person, requester: Requester, decision: 'approve' | 'deny'): { code: 'APPROVAL_NOT_FOUND' | 'FORBIDDEN'; message: string } | null {
  if (!mayView(terms, person, requester)) return { code: 'APPROVAL_NOT_FOUND', message: 'No such approval.' };
  if (decision === 'deny' ? mayDeny(terms, person, requester) : mayApprove(terms, person, requester)) return null;
  if (decision === 'approve' && person.id === requester.id && terms.distinctFromRequester) {
    return { code: 'FORBIDDEN', message: 'This action needs approvers other than you: you may deny your own request, not approve it.' };
  }
  return { code: 'FORBIDDEN', message: `You are not an approver of this action (${describeApprovers(terms)}).` };
}

export type AttemptRefusal = { code: 'APPROVAL_NOT_FOUND' | 'FORBIDDEN' | 'CONFLICT'; message: string };

/**
 * Pure: why `person`'s decision will be refused, known before anything is submitted: not visible
 * (404), not allowed (403), or their approval counted already (409). Null: go ahead. The one
 * pre-check of every transport (v1 approve/deny, a /chat, MCP or AG-UI confirm or deny), so a
 * refused attempt never becomes a failed turn; the decision step asks `decisionRefusal` again
 * under the approval's lock.
 */
export function attemptRefusal(
  terms: ApproverTerms,
  person: Person,
  requester: Requester,
  decision: 'approve' | 'deny',
  decided: ReadonlyArray<{ userId: string; decision: 'approve' | 'deny' }>,
): AttemptRefusal | null {
  const refusal = decisionRefusal(terms, person, requester, decision);
  if (refusal) return refusal;
  if (decision === 'approve' && decided.some((d) => d.userId === person.id && d.decision === 'approve')) {
    return { code: 'CONFLICT', message: 'You have already approved this: no approver counts twice.' };
  }
  return null;
}

/** The approvers in words: "2 of role admin", "1 of ann, bob". */
export function describeApprovers(terms: ApproverTerms): string {
  const who = named(terms) ? [...terms.roles.map((r) => `role ${r}`), ...terms.users].join(', ') : 'the requester or an admin';
  const escalated = terms.escalated?.length ? `, or since escalation ${terms.escalated.map((r) => `role ${r}`).join(', ')}` : '';
  return `${terms.required} of ${who}${escalated}${terms.distinctFromRequester ? ', not the requester' : ''}`;
}

export type Tally = { state: 'pending'; approved: number } | { state: 'approved'; approved: number } | { state: 'denied'; approved: number };

/** Pure: where the decisions so far leave an approval. Any denial ends it; `required` approvals approve it. */
export function tally(terms: ApproverTerms, decisions: ReadonlyArray<{ userId: string; decision: 'approve' | 'deny' }>): Tally {
  const approved = new Set(decisions.filter((d) => d.decision === 'approve').map((d) => d.userId)).size;
  if (decisions.some((d) => d.decision === 'deny')) return { state: 'denied', approved };
  return { state: approved >= terms.required ? 'approved' : 'pending', approved };
}
