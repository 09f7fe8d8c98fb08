/**
 * Approve with a grant (issue 27 item 2): "Allow for 1 hour" confirms this call and makes a
 * standing grant. The rule that paused the call fixed what may be granted when the approval
 * opened (its `grant_offer`: the longest grant, at most 8 h, and the default match), so a grant is
 * checked against the policy as the approver saw it, and the grant keeps that rule (issue 36 item 2:
 * its hash and approvers; it covers only calls that rule decides). One pure check (`grantRefusal`) serves v1's
 * early answer and the decision step; the grant itself is made in the decision's transaction
 * (decide.ts writeTerminalDecision), so it exists exactly when the approval is approved.
 * @module
 */
import type { GrantRequest } from '../../src/lib/wire/index.ts';
import { roleAllows } from '../auth/index.ts';
import { findToolSpec } from '../operations/index.ts';
import { grantLimitS, grantOffer, grantRuleOf, type GrantRule, type PolicyDecision, type PolicyRule } from '../policy/index.ts';
import { decisionRefusal, DEFAULT_TERMS, type Person } from './approvers.ts';
import { createGrant, grantMatches, type GrantApprovers } from '../db/grants.ts';
import type { Queryable } from '../db/index.ts';
import type { ErrorCode } from '../errors.ts';

/** What an approval offers besides Confirm: the approvals row's `grant_offer`. */
export interface GrantOfferRow {
  max_ttl_s: number;
  match: Record<string, unknown>;
}

/** A grant an approval made (issue 37 item 6): what it covers and until when; the card and the history say so. */
export interface GrantMade {
  id: string;
  match: Record<string, unknown>;
  ttl_s: number;
  expires_at: string;
}

/** Pure: the grant made, as `makeGrant` made it (the request's match, else the offer's default). */
export function grantMadeOf(id: string, request: GrantRequest, offer: GrantOfferRow, now: Date): GrantMade {
  return { id, match: request.match ?? offer.match, ttl_s: request.ttl_s, expires_at: new Date(now.getTime() + request.ttl_s * 1000).toISOString() };
}

/** Pure: who may approve an approval that needs several (the card says whom it waits for, issue 37 item 4); nothing for one. */
export function approversOf(terms: { required: number; roles: readonly string[]; users: readonly string[] }): { approvers?: { roles: string[]; users: string[] } } {
  return terms.required > 1 ? { approvers: { roles: [...terms.roles], users: [...terms.users] } } : {};
}

export interface GrantRefusal {
  code: Extract<ErrorCode, 'FORBIDDEN' | 'VALIDATION_ERROR'>;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * Pure: why this approver may not make this grant on this approval, or null. Never when the rule
 * offers none (several approvers, a step-up, `grantable: false`), or when the approval does not
 * know the rule it would be made under (`rule`: older rows); never longer than the rule's
 * `max_grant_s`; a tenant grant needs an admin; the match must cover the call being approved (a
 * grant is an approval: it starts from the action the approver saw), and may be empty only when
 * the rule itself is scoped (`when`, issue 36 item 2): an empty match under a catch-all rule
 * would stand for every call of the tool that rule decides.
 */
export function grantRefusal(
  offer: GrantOfferRow | null,
  request: GrantRequest,
  decider: { role: string },
  args: Readonly<Record<string, unknown>>,
  rule: GrantRule | null,
): GrantRefusal | null {
  if (!offer || !rule) return { code: 'FORBIDDEN', message: 'The policy does not allow a standing grant for this action: confirm it once instead.' };
  if (request.ttl_s > offer.max_ttl_s) {
    return { code: 'VALIDATION_ERROR', message: `grant.ttl_s: this action's rule allows grants of at most ${offer.max_ttl_s} seconds.`, details: { max_ttl_s: offer.max_ttl_s } };
  }
  if (request.scope === 'tenant' && decider.role !== 'admin') return { code: 'FORBIDDEN', message: 'Only an admin may grant for the whole tenant.' };
  if (request.match && !grantMatches(request.match, args)) {
    return { code: 'VALIDATION_ERROR', message: 'grant.match must cover the call being approved (each named argument equal to its value).' };
  }
  if (Object.keys(request.match ?? offer.match).length === 0 && !rule.scoped) {
    return { code: 'VALIDATION_ERROR', message: 'grant.match is empty: it would cover every call of this tool. Name the arguments it covers (each equal to its value in this call).' };
  }
  return null;
}

/** Pure: a rule's approvers as a grant records them (the defaults when it names none). */
export function grantApprovers(rule: PolicyRule): GrantApprovers {
  const a = rule.action === 'require_approval' ? rule.approvals : undefined;
  return a ? { required: a.count, roles: a.roles, users: a.users, distinctFromRequester: a.distinct_from_requester } : DEFAULT_TERMS;
}

/**
 * Pure: why this caller may not make this grant directly (v1 `POST /grants`), with no approval
 * before it, or null. It needs the right to decide that tool: the tool's permission (RBAC, for the
 * built-in tools), an approver of the rule that decides a call with the match's values, and that
 * rule's grant terms, as an approval would offer them (an empty match only under a scoped rule).
 */
export function directGrantRefusal(decision: PolicyDecision, request: GrantRequest & { match: Record<string, unknown> }, caller: Person): GrantRefusal | null {
  const { tool, rule } = decision;
  const permission = findToolSpec(tool)?.permission;
  if (permission && !roleAllows({ role: caller.role, permission })) return { code: 'FORBIDDEN', message: `You are not allowed to run ${tool}, so you may not grant it.` };
  if (rule.action === 'require_approval') {
    const refusal = decisionRefusal(grantApprovers(rule), caller, { id: caller.id, tenant: caller.tenant }, 'approve');
    if (refusal) return { code: 'FORBIDDEN', message: `You may not decide ${tool}, so you may not grant it.` };
  }
  // The offer for the match's own values: an empty match has none under a catch-all rule, so say why.
  const rules = grantRuleOf(decision);
  const offer = grantOffer(rule, request.match) ?? (grantLimitS(rule) > 0 ? { max_ttl_s: grantLimitS(rule), match: {} } : null);
  return grantRefusal(offer, request, caller, request.match, rules);
}

/**
 * The grant an approval makes, in the decision's transaction: for the requester (or, scope tenant,
 * the requester's tenant), of the approval's tool, the request's match or else the offer's default,
 * under the rule that paused the call (its hash and approvers: a grant covers only that rule's calls).
 */
export async function makeGrant(
  db: Queryable,
  approval: { tool: string; requestedBy: string; offer: GrantOfferRow; rule: GrantRule; approvers: GrantApprovers },
  request: GrantRequest,
  who: { deciderId: string; requesterTenant: string },
  now: Date,
): Promise<string> {
  const tenant = request.scope === 'tenant';
  const grant = await createGrant(db, {
    tool: approval.tool, match: request.match ?? approval.offer.match, createdBy: who.deciderId,
    scopeUser: tenant ? null : approval.requestedBy, scopeTenant: tenant ? who.requesterTenant : null,
    expiresAt: new Date(now.getTime() + request.ttl_s * 1000), ruleHash: approval.rule.hash, approvers: approval.approvers,
  });
  return grant.id;
}
