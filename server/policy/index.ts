/**
 * The tool policy (issue 11, seed 000): one decision function for every tool call, built-in or MCP,
 * on /chat and every other transport. Load it once at start (`loadToolPolicy`), then ask
 * `decide(subject, tool, builtin)`.
 * @module
 */
import { catalogDefault, UNKNOWN_TOOL_DEFAULT } from './builtin.ts';
import { decideToolPolicy, possibleActions } from './decide.ts';
import { loadPolicyFile } from './file.ts';
import type { PolicyDecision, PolicyRules, PolicySubject, ToolAction } from './types.ts';

export interface PolicyFile {
  /** The rules of POLICY_FILE; null when none is configured (built-in defaults alone). */
  rules: PolicyRules | null;
  /** The file the rules came from. */
  source: string | null;
  /**
   * The decision for one call. `builtin` is the tool's own default when the caller knows it (MCP
   * annotations); otherwise the catalog's, and for undeclared tools require_approval.
   */
  decide(subject: PolicySubject, tool: string, builtin?: ToolAction, args?: Readonly<Record<string, unknown>>): PolicyDecision;
  /** Every action a call of `tool` may get, whatever its arguments (decide.ts possibleActions). */
  possible(subject: PolicySubject, tool: string, builtin?: ToolAction): Set<ToolAction>;
}

export function createToolPolicy(rules: PolicyRules | null, source: string | null = null): PolicyFile {
  return {
    rules,
    source,
    decide: (subject, tool, builtin, args) => decideToolPolicy(rules, subject, tool, builtin ?? catalogDefault(tool) ?? UNKNOWN_TOOL_DEFAULT, args),
    possible: (subject, tool, builtin) => possibleActions(rules, subject, tool, builtin ?? catalogDefault(tool) ?? UNKNOWN_TOOL_DEFAULT),
  };
}

/** Reads POLICY_FILE (throws PolicyFileError naming the line) and builds the policy. */
export async function loadToolPolicy(file: string | undefined): Promise<PolicyFile> {
  return createToolPolicy(await loadPolicyFile(file), file ?? null);
}

export { decideToolPolicy, possibleActions, riskLevel, strictness, unknownRuleTools, userKey } from './decide.ts';
export { parsePolicyText, PolicyFileError } from './file.ts';
export { catalogDefault } from './builtin.ts';
export { cachedTenantLookup, tenantOfUser, DEFAULT_TENANT } from './tenant.ts';
export { stampOf, TOOL_ACTIONS, PolicyRulesSchema } from './types.ts';
export { approvalTermsOf, grantLimitS, grantOffer, type GrantOffer, ruleEntries, ruleIssues, ruleMatches, firstMatch, MAX_GRANT_S, MAX_APPROVALS, MAX_RULE_TIMEOUT_S } from './rule.ts';
export { grantRuleOf, grantTerms, ruleHash, ruleScoped, type GrantRule } from './rule-identity.ts';
export type { ApprovalsRequirement, ApprovalTerms, PolicyRule, ToolRule } from './rule.ts';
export type { PolicyDecision, PolicyRules, PolicyStamp, PolicySubject, ToolAction, PolicyLevel } from './types.ts';
