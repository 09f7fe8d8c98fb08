/**
 * Edit, then approve (issue 27 item 1): an approver changes a paused call's arguments as they
 * approve it. Applied by the decision step (decide.ts countDecision) under the approval's row lock,
 * before the approver's decision is counted:
 *
 *   arguments checked against the tool's input schema      -> VALIDATION_ERROR with field errors
 *   the tool policy re-checked on the edited call           -> deny: FORBIDDEN, nothing recorded
 *   the terms the edited call needs (editedTerms: approvers, -> the editor may not approve it: FORBIDDEN;
 *   escalation, step-up, expiry; it may need more)             a step-up: the passkey over the final hash
 *   a changed action                                        -> final_args + final_action_hash + those terms on
 *                                                              the row, no grant offer, the approvals so far
 *                                                              forgotten, open links revoked
 *
 * The row's `args` and `action_hash` stay the model's: they bind the paused interrupt. What the
 * edit changed is an RFC 6902 JSON Patch (`argumentsPatch`), on the audit rows and the ledger.
 * @module
 */
import jsonPatch from 'fast-json-patch';
import type { ArgumentsEdit } from '../../src/lib/wire/index.ts';
import type { EditReview } from '../agent/index.ts';
import { clearApprovalDecisions } from '../db/approval-decisions.ts';
import { revokeOpenLinks } from '../db/approval-links.ts';
import { recordEdit, type Approval, type ApprovalTermsRow } from '../db/approvals.ts';
import type { Queryable } from '../db/index.ts';
import { AirlockError } from '../errors.ts';
import { approvalTermsOf, type ApprovalTerms, type PolicyDecision } from '../policy/index.ts';
import { decisionRefusal, describeApprovers, DEFAULT_TERMS, type DecisionChannel, type Person, type Requester } from './approvers.ts';
import { actionHash } from './rules.ts';

/** What a confirm brings when its approver edited the arguments, and how to check them (as the requester). */
export interface ApprovalEdit {
  args: Record<string, unknown>;
  review: (tool: string, args: Record<string, unknown>) => Promise<EditReview>;
  /** The configured approval timeout (APPROVAL_TIMEOUT_S): the edited rule's when it names none. */
  defaultTimeoutS?: number;
}

/** An RFC 6902 JSON Patch, as the wire carries it. */
export type JsonPatch = ArgumentsEdit['patch'];

/** Pure: the RFC 6902 JSON Patch from the proposed arguments to the edited ones (plain JSON operations). */
export function argumentsPatch(original: Record<string, unknown>, edited: Record<string, unknown>): JsonPatch {
  return JSON.parse(JSON.stringify(jsonPatch.compare(original, edited))) as JsonPatch;
}

/** A rule's approvers as the approval row keeps them; null: the defaults. */
export function termsRow(terms: ApprovalTerms | undefined): ApprovalTermsRow | null {
  const a = terms?.approvals;
  return a ? { required: a.count, roles: a.roles, users: a.users, distinctFromRequester: a.distinct_from_requester } : null;
}

/** The terms of an approval row that an edit re-decides: who approves, whom it escalates to, the step-up, until when it waits. */
export interface RowTerms {
  terms: ApprovalTermsRow;
  escalate: { afterS: number; roles: string[] } | null;
  stepUp: 'passkey' | null;
  expiresAt: Date;
}

/**
 * Pure: the terms the edited call needs (issue 36 item 1: every term of the rule it falls under,
 * as a direct call of it would need). The policy decides for the edited call as for any call: a
 * rule asking approval names its approvers (or the defaults), its escalation, its step-up, and its
 * timeout, which can only bring the expiry forward (the earlier of the current expiry and
 * `created_at + timeout_s`; no timeout_s: the configured `defaultTimeoutS`). An edit into a call the
 * policy would let run keeps the terms already asked: an approval never needs less because of an
 * edit into an allowed value. Grantability is not here: an edited approval offers no grant (recordEdit).
 */
export function editedTerms(current: RowTerms & { createdAt: Date }, policy: Pick<PolicyDecision, 'action' | 'rule'>, defaultTimeoutS?: number): RowTerms {
  const kept = { terms: current.terms, escalate: current.escalate, stepUp: current.stepUp, expiresAt: current.expiresAt };
  if (policy.action !== 'require_approval') return kept;
  const t = approvalTermsOf(policy.rule);
  const timeoutS = t?.timeout_s ?? defaultTimeoutS;
  const ruleExpiry = timeoutS ? current.createdAt.getTime() + timeoutS * 1000 : Infinity;
  return {
    terms: termsRow(t) ?? { ...DEFAULT_TERMS, roles: [], users: [] },
    escalate: t?.escalate ? { afterS: t.escalate.after_s, roles: [...t.escalate.roles] } : null,
    stepUp: t?.step_up ?? null,
    expiresAt: new Date(Math.min(current.expiresAt.getTime(), ruleExpiry)),
  };
}

/** The edit in the words of the audit row and the ledger: both argument sets, the patch, both hashes. */
export interface EditRecord {
  original_args: Record<string, unknown>;
  args: Record<string, unknown>;
  patch: JsonPatch;
  original_action_hash: string | null;
  action_hash: string;
}

/** Pure: the edit an approval row carries; null when it was not edited. */
export function editOf(approval: Pick<Approval, 'args' | 'actionHash' | 'finalArgs' | 'finalActionHash'>): EditRecord | null {
  if (!approval.finalArgs || !approval.finalActionHash) return null;
  return { original_args: approval.args, args: approval.finalArgs, patch: argumentsPatch(approval.args, approval.finalArgs), original_action_hash: approval.actionHash, action_hash: approval.finalActionHash };
}

/** Where the approver sees an edit before approving: v1's approval (`edited_args`) and the inbox row. The chat card, AG-UI's interrupt, a link's page and MCP show the call as proposed. */
const SHOWS_EDITS: ReadonlySet<DecisionChannel> = new Set(['v1', 'inbox']);

/**
 * Pure: the refusal of a plain approve of an approval someone else edited, by a channel that shows
 * the call as proposed: its approver did not see what would run (an M-of-N approval edited by its
 * first approver, say). Sending the arguments as an edit is seeing them. Null: nothing to refuse.
 */
export function unseenEditRefusal(approval: Pick<Approval, 'finalActionHash'>, channel: DecisionChannel, input: { decision: 'approve' | 'deny'; edited: boolean }): { code: 'CONFLICT'; message: string } | null {
  if (input.decision !== 'approve' || input.edited || !approval.finalActionHash || SHOWS_EDITS.has(channel)) return null;
  return { code: 'CONFLICT', message: 'The arguments were edited after this was shown to you: review what will run in the approvals inbox, or approve with those arguments as your edit.' };
}

/** What an accepted edit changes: the final arguments, their action hash, and the terms they need (editedTerms). */
export interface CheckedEdit extends RowTerms {
  finalArgs: Record<string, unknown>;
  finalActionHash: string;
}

/** The approval row as an edit is checked against it. */
export type EditedApproval = RowTerms & { tool: string; requestedBy: string; createdAt: Date; currentActionHash: string | null };

/**
 * Checks `edit` of an approval for `person`, who approves it, writing nothing: null when it changes
 * nothing (the action as it stands). Throws VALIDATION_ERROR (schema), FORBIDDEN (policy deny; an
 * editor who may not approve the edited call). The decision service asks it before a decision is
 * submitted, for a clear 400 or 403; the decision step again, under the row lock. A step-up of the
 * edited call's rule is the decision step's (stepUpProof, over the final action hash): 403 without it.
 */
export async function checkEdit(approval: EditedApproval, input: { edit: ApprovalEdit; person: Person; requester: Requester; grant?: unknown }): Promise<CheckedEdit | null> {
  const { edit, person, requester } = input;
  // A grant is offered for the call as proposed (its match, its rule's limits): made together with
  // an edit it would stand for a call nobody was offered. Refused; approve the edit, grant later.
  if (input.grant) throw new AirlockError('VALIDATION_ERROR', 'A grant cannot be made with edited arguments: approve the edit alone (a grant is offered for the call as proposed).');
  // A passkey signs the action hash as proposed: an edit would run something the signature does not cover.
  if (approval.stepUp) throw new AirlockError('FORBIDDEN', 'This approval needs a passkey signature over the action as proposed: it cannot be edited. Approve it as it is, or deny it.');
  const review = await edit.review(approval.tool, edit.args);
  if (!review.ok) {
    const list = review.fields.map((f) => `${f.path || '(arguments)'}: ${f.message}`).join('; ');
    throw new AirlockError('VALIDATION_ERROR', `The edited arguments do not fit ${approval.tool}: ${list}`, { details: { fields: review.fields } });
  }
  if (review.policy.action === 'deny') {
    throw new AirlockError('FORBIDDEN', `Refused: the tool policy does not allow ${approval.tool} with these arguments (${review.policy.scope}).`);
  }
  const finalActionHash = actionHash({ tool: approval.tool, args: review.args, userId: approval.requestedBy });
  if (finalActionHash === approval.currentActionHash) return null;
  const terms = editedTerms(approval, review.policy, edit.defaultTimeoutS);
  if (decisionRefusal(terms.terms, person, requester, 'approve')) {
    throw new AirlockError('FORBIDDEN', `This edit needs ${describeApprovers(terms.terms)} to approve it, and you are not one of them: approve the action as proposed, deny it, or ask them.`);
  }
  return { finalArgs: review.args, finalActionHash, ...terms };
}

/**
 * Applies `edit` to the locked pending `approval` for `person`, who approves it (checkEdit, then
 * the writes). Returns the row as the edit left it (unchanged when the edit is no change).
 */
export async function applyEdit(db: Queryable, input: { approval: Approval; edit: ApprovalEdit; person: Person; requester: Requester; now: Date; grant?: unknown }): Promise<Approval> {
  const { approval } = input;
  const checked = await checkEdit({ ...approval, currentActionHash: approval.finalActionHash ?? approval.actionHash }, input);
  if (!checked) return approval;
  // Everyone approved another action: they decide again (M-of-N), and no link sent for it works.
  await clearApprovalDecisions(db, approval.id);
  await revokeOpenLinks(db, approval.id, input.now);
  return recordEdit(db, { id: approval.id, ...checked });
}
