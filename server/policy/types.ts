/**
 * The tool policy's shapes (seed 000, "Tool Policy Contract"): the four actions, the rules a
 * POLICY_FILE holds, and the decision every tool call carries into approvals, events and audit.
 * Rules themselves are rule.ts's.
 * @module
 */
import { z } from 'zod';
import { TOOL_ACTIONS, type ToolAction } from './actions.ts';
import { ruleIssues, type PolicyRule, type ToolRule } from './rule.ts';

export { TOOL_ACTIONS, type ToolAction };

const Action = z.enum(TOOL_ACTIONS);
/** A rule (rule.ts): validated there with one clear message per mistake, kept as written. */
const Rule = z.custom<ToolRule>().superRefine((value, ctx) => {
  for (const issue of ruleIssues(value)) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path, params: issue.key ? { key: issue.key } : {} });
});
const ToolMap = z.record(z.string().min(1), Rule);
const Tools = z.strictObject({ tools: ToolMap });

/** The rules of a policy file, in the seed's shape (`user_rules` keyed by `tenant:username`). */
export const PolicyRulesSchema = z.strictObject({
  default_action: Action.optional(),
  tool_rules: ToolMap.default({}),
  tenant_rules: z.record(z.string().min(1).regex(/^[^:]+$/, 'a tenant key has no ":"'), Tools).default({}),
  user_rules: z.record(z.string().regex(/^[^:]+:[^:]+$/, 'a user key is tenant:username'), Tools).default({}),
  /**
   * Per service client (its client_id): `user_key_only: true` lets that service name the user by
   * the body's `user_key` alone, with no X-User-JWT (seed 000's PSKA call; issue 24). Audited.
   */
  service_rules: z.record(z.string().min(1), z.strictObject({ user_key_only: z.boolean() })).default({}),
});
export type PolicyRules = z.infer<typeof PolicyRulesSchema>;

/** Who a decision is for: the tenant and the username (`user_key` = `tenant:username`). */
export interface PolicySubject {
  tenant: string;
  username: string;
}

/** Which level decided: a rule of the file, or the built-in default of the tool. */
export type PolicyLevel = 'user' | 'tenant' | 'tool' | 'default' | 'builtin';

/** What the policy decided for one tool call (copied into approvals, events and audit rows). */
export interface PolicyDecision {
  tool: string;
  action: ToolAction;
  /** `user:<tenant>:<username>`, `tenant:<tenant>`, `tool:<name>`, `default` or `builtin`. */
  scope: string;
  level: PolicyLevel;
  /** True when a rule of the policy file decided; false for the built-in default. */
  matched: boolean;
  /** One sentence for people: which rule, and why. */
  reason: string;
  /**
   * The rule entry that decided, in its normal form (approvers, escalation, timeout, grants,
   * step-up); `{action}` alone for default_action and the built-in. `entry` is its index in a list.
   */
  rule: PolicyRule;
  entry?: number;
}

/** The part of a decision stored with approvals, ledger events and audit rows. */
export interface PolicyStamp {
  scope: string;
  action: ToolAction;
  matched: boolean;
}

export function stampOf(d: PolicyDecision): PolicyStamp {
  return { scope: d.scope, action: d.action, matched: d.matched };
}
