/**
 * The identity of a deciding rule (issue 36 item 2): a standing grant keeps the rule it was made
 * under, and covers a later call only when that call's deciding rule is the same one. Its hash is
 * the canonical hash (sorted keys, SHA-256) of the tool, the scope path that decided (`tool:<name>`,
 * `tenant:<t>`, `user:<t>:<u>`, `default`, `builtin`), the entry's index in a list, and the entry in
 * its normal form: an edit of the rule, a new entry before it, or a move to another level retires
 * every grant made under it. A rule is "scoped" when it has `when`: only then may a grant's match
 * be empty (the rule itself says which calls it covers).
 * @module
 */
import { hashJson } from '../canonical-json.ts';
import { grantOffer, type GrantOffer, type PolicyRule } from './rule.ts';
import type { PolicyDecision } from './types.ts';

/** What a grant (and the approval offering one) keeps of its rule. */
export interface GrantRule {
  hash: string;
  scoped: boolean;
}

/** Pure: the canonical hash of the deciding rule entry and its scope path. */
export function ruleHash(decision: Pick<PolicyDecision, 'tool' | 'scope' | 'entry' | 'rule'>): string {
  return hashJson({ tool: decision.tool, scope: decision.scope, entry: decision.entry ?? null, rule: decision.rule });
}

/** Pure: a rule with `when` names the calls it decides itself. */
export const ruleScoped = (rule: PolicyRule): boolean => rule.when !== undefined;

/** Pure: the rule a grant made under this decision keeps. */
export function grantRuleOf(decision: Pick<PolicyDecision, 'tool' | 'scope' | 'entry' | 'rule'>): GrantRule {
  return { hash: ruleHash(decision), scoped: ruleScoped(decision.rule) };
}

/**
 * Pure: what a paused call's approval offers (rule.ts grantOffer) and, when it offers a grant, the
 * rule that grant would be made under (the approval row's `grant_rule`).
 */
export function grantTerms(decision: PolicyDecision, args: Readonly<Record<string, unknown>>, toolScope: readonly string[] = []): { grant: GrantOffer | null; grantRule?: GrantRule } {
  const grant = grantOffer(decision.rule, args, toolScope);
  return grant ? { grant, grantRule: grantRuleOf(decision) } : { grant };
}
