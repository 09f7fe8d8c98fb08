/**
 * `GET /api/agent/v1/policy` (the effective tool policy) and `POST /api/agent/v1/policy/check`
 * (seed 000's dry run). A user sees the rules that can apply to them (their tenant's, their own)
 * and their effective action per tool; the service token alone sees every rule and may check any
 * user_key. A user_key or tenant_key naming someone other than the caller's user is FORBIDDEN.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { Queryable } from '../db/index.ts';
import { AirlockError } from '../errors.ts';
import { APPROVAL_TOOLS } from '../operations/index.ts';
import { riskLevel, stampOf, tenantOfUser, TOOL_ACTIONS, unknownRuleTools, userKey, type PolicyRules, type PolicySubject, type ToolAction, type PolicyFile } from '../policy/index.ts';
import { parseInput } from '../http/validate.ts';
import { authenticateCaller, type Caller, type Verifiers } from './caller.ts';
import { useV1ErrorBodies } from './errors.ts';

export interface PolicyRouteOptions {
  pool: Queryable;
  policy: PolicyFile;
  verifiers: Verifiers;
  /** The tools the agent has now with their built-in defaults (catalog and MCP annotations). */
  builtinDefaults: () => Map<string, ToolAction>;
  /** `<server>_` of the configured MCP servers (their tools count as known before they are listed). */
  toolPrefixes?: () => string[];
}

const CheckBody = z.strictObject({
  tool_name: z.string().min(1).max(200),
  tool_args: z.record(z.string(), z.unknown()).optional(),
  user_key: z.string().regex(/^[^:]+:[^:]+$/, 'user_key is tenant:username').optional(),
  tenant_key: z.string().min(1).regex(/^[^:]+$/).optional(),
});

/** The rules a user may see: everything but other tenants' and other users' entries. */
export function rulesVisibleTo(rules: PolicyRules | null, subject: PolicySubject | null): PolicyRules | null {
  if (!rules || !subject) return rules;
  const key = userKey(subject);
  return {
    ...rules,
    tenant_rules: Object.fromEntries(Object.entries(rules.tenant_rules).filter(([t]) => t === subject.tenant)),
    user_rules: Object.fromEntries(Object.entries(rules.user_rules).filter(([k]) => k === key)),
    // Which services may act for a user by user_key alone is the operator's, not a user's.
    service_rules: {},
  };
}

/**
 * Whom a dry run is about. A user (own token or on behalf) is the subject; a key naming anyone
 * else is FORBIDDEN. The service alone may ask about any key: the tenant is user_key's prefix
 * (seed 000) and tenant_key must agree with it.
 */
export function checkSubject(caller: { user: PolicySubject | null; isService: boolean }, body: { user_key?: string; tenant_key?: string }): PolicySubject {
  const [keyTenant, keyUser] = body.user_key?.split(':') ?? [];
  if (keyTenant && body.tenant_key && body.tenant_key !== keyTenant) {
    throw new AirlockError('VALIDATION_ERROR', `tenant_key ${body.tenant_key} does not match the tenant of user_key ${body.user_key}.`);
  }
  if (caller.user) {
    if (body.user_key && body.user_key !== userKey(caller.user)) throw new AirlockError('FORBIDDEN', 'user_key must be your own.');
    if (body.tenant_key && body.tenant_key !== caller.user.tenant) throw new AirlockError('FORBIDDEN', 'tenant_key must be your own.');
    return caller.user;
  }
  if (!caller.isService) throw new AirlockError('UNAUTHORIZED');
  return { tenant: keyTenant ?? body.tenant_key ?? '', username: keyUser ?? '' };
}

export const policyRoutes: FastifyPluginAsync<PolicyRouteOptions> = async (app, { pool, policy, verifiers, builtinDefaults, toolPrefixes }) => {
  useV1ErrorBodies(app);

  async function subjectOf(caller: Caller): Promise<PolicySubject | null> {
    if (!caller.user) return null;
    return { tenant: await tenantOfUser(pool, caller.user.userId), username: caller.user.username };
  }

  app.get('/policy', async (request) => {
    const caller = await authenticateCaller(request, verifiers);
    const subject = await subjectOf(caller);
    const defaults = builtinDefaults();
    const visible = rulesVisibleTo(policy.rules, subject);
    return {
      schema: 'airlock.policy.v1',
      source: policy.source,
      actions: TOOL_ACTIONS,
      precedence: ['user_rules', 'tenant_rules', 'tool_rules', 'default_action', 'builtin'],
      builtin: {
        require_approval: [...new Set([...APPROVAL_TOOLS, ...[...defaults].filter(([, a]) => a === 'require_approval').map(([t]) => t)])].sort(),
        defaults: Object.fromEntries([...defaults].sort(([a], [b]) => a.localeCompare(b))),
        note: 'A built-in require_approval is a floor: only a rule naming the tool lowers it; default_action never does.',
      },
      policy: visible,
      // Rule names that match no tool (typos: a misspelt deny denies nothing).
      unknown_tools: unknownRuleTools(visible, new Set(defaults.keys()), toolPrefixes?.() ?? []),
      effective: subject
        ? {
            user_key: userKey(subject),
            tenant_key: subject.tenant,
            tools: [...defaults.keys()].sort().map((tool) => {
              const d = policy.decide(subject, tool, defaults.get(tool));
              return { tool_name: tool, policy_action: d.action, policy_scope: d.scope, policy_matched: d.matched, reason: d.reason };
            }),
          }
        : null,
    };
  });

  app.post('/policy/check', async (request) => {
    const caller = await authenticateCaller(request, verifiers);
    const body = parseInput(CheckBody, request.body ?? {}, 'body');
    const subject = checkSubject({ user: await subjectOf(caller), isService: caller.service !== null }, body);
    // `tool_args` decide the rules with `when` (issue 26): the same call, the same answer.
    const d = policy.decide(subject, body.tool_name, builtinDefaults().get(body.tool_name), body.tool_args ?? {});
    const stamp = stampOf(d);
    return {
      tool_name: body.tool_name,
      user_key: subject.username ? userKey(subject) : null,
      tenant_key: subject.tenant || null,
      level: riskLevel(d.action),
      reason: d.reason,
      // Airlock has no command patterns (no shell tool): nothing to match.
      pattern_matched: null,
      policy_scope: stamp.scope,
      policy_action: stamp.action,
      policy_matched: stamp.matched,
      requires_confirmation: d.action === 'require_approval',
      // How many approvers a call like this one needs (the rule's approvals.count; 0: none).
      approvals_required: d.action === 'require_approval' ? (d.rule.approvals?.count ?? 1) : 0,
      should_allow: d.action !== 'deny',
    };
  });
};
