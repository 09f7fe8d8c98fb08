import { describe, expect, it } from 'vitest';
import { createToolPolicy, decideToolPolicy, PolicyRulesSchema, riskLevel, unknownRuleTools, type PolicyRules, type ToolAction } from '../../../../server/policy/index.ts';

const rules: PolicyRules = PolicyRulesSchema.parse({
  default_action: 'caution',
  tool_rules: { exec: 'require_approval', write_file: 'deny', deploy_service: 'caution', check_health: 'allow' },
  tenant_rules: { pska: { tools: { pska_search: 'allow', exec: 'deny' } }, acme: { tools: { start_maintenance: 'allow' } } },
  user_rules: { 'pska:operator': { tools: { exec: 'require_approval' } }, 'acme:root': { tools: { write_file: 'allow', end_maintenance: 'allow' } } },
});
const allowAll = PolicyRulesSchema.parse({ default_action: 'allow' });
const denyAll = PolicyRulesSchema.parse({ default_action: 'deny', tool_rules: { check_health: 'allow' } });
const noDefault = PolicyRulesSchema.parse({ tool_rules: { list_tasks: 'caution' } });

const who = (userKey: string) => {
  const [tenant, username] = userKey.split(':');
  return { tenant, username };
};

// [rules, user_key, tool, built-in default] -> [action, scope, matched]
const table: Array<[string, PolicyRules | null, string, string, ToolAction, ToolAction, string, boolean]> = [
  // user > tenant > tool > default > built-in
  ['user rule beats the tenant rule', rules, 'pska:operator', 'exec', 'require_approval', 'require_approval', 'user:pska:operator', true],
  ['tenant rule beats the tool rule', rules, 'pska:someone', 'exec', 'require_approval', 'deny', 'tenant:pska', true],
  ['tool rule for another tenant', rules, 'demo:alice', 'exec', 'require_approval', 'require_approval', 'tool:exec', true],
  ['tool rule deny', rules, 'demo:alice', 'write_file', 'caution', 'deny', 'tool:write_file', true],
  ['user rule lowers a tool deny', rules, 'acme:root', 'write_file', 'caution', 'allow', 'user:acme:root', true],
  ['tenant rule allows a tool the tool rules do not name', rules, 'pska:x', 'pska_search', 'require_approval', 'allow', 'tenant:pska', true],
  ['default_action for an unnamed safe tool', rules, 'demo:alice', 'list_tasks', 'allow', 'caution', 'default', true],
  // the floor: only a rule naming the tool lowers the built-in require_approval
  ['default_action caution never lowers a dangerous tool', rules, 'demo:alice', 'start_maintenance', 'require_approval', 'require_approval', 'builtin', false],
  ['default_action allow never lowers a dangerous tool', allowAll, 'demo:alice', 'deploy_service', 'require_approval', 'require_approval', 'builtin', false],
  ['a tool rule naming the tool lowers it', rules, 'demo:alice', 'deploy_service', 'require_approval', 'caution', 'tool:deploy_service', true],
  ['a tenant rule naming the tool lowers it', rules, 'acme:bob', 'start_maintenance', 'require_approval', 'allow', 'tenant:acme', true],
  ['a user rule naming the tool lowers it', rules, 'acme:root', 'end_maintenance', 'require_approval', 'allow', 'user:acme:root', true],
  ['default_action deny is stricter than the built-in', denyAll, 'demo:alice', 'deploy_service', 'require_approval', 'deny', 'default', true],
  ['default_action deny, tool rule allows', denyAll, 'demo:alice', 'check_health', 'allow', 'allow', 'tool:check_health', true],
  ['default_action allow for a safe tool', allowAll, 'demo:alice', 'check_health', 'allow', 'allow', 'default', true],
  ['MCP caution default stays above default_action allow', allowAll, 'demo:alice', 'fs_write', 'caution', 'caution', 'builtin', false],
  // no default_action / no file
  ['no default_action: built-in', noDefault, 'demo:alice', 'deploy_service', 'require_approval', 'require_approval', 'builtin', false],
  ['no default_action: tool rule', noDefault, 'demo:alice', 'list_tasks', 'allow', 'caution', 'tool:list_tasks', true],
  ['no policy file: dangerous', null, 'demo:alice', 'deploy_service', 'require_approval', 'require_approval', 'builtin', false],
  ['no policy file: safe', null, 'demo:alice', 'check_health', 'allow', 'allow', 'builtin', false],
  // keys are exact: a user of another tenant with the same name gets nothing of the rule
  ['user rules are per tenant', rules, 'demo:operator', 'exec', 'require_approval', 'require_approval', 'tool:exec', true],
];

describe('decideToolPolicy: precedence user > tenant > tool > default > built-in', () => {
  it.each(table)('%s', (_name, r, key, tool, builtin, action, scope, matched) => {
    const d = decideToolPolicy(r, who(key), tool, builtin);
    expect({ action: d.action, scope: d.scope, matched: d.matched }).toEqual({ action, scope, matched });
    expect(d.tool).toBe(tool);
    expect(d.reason).toContain(tool);
  });
});

describe('createToolPolicy: built-in defaults from the catalog', () => {
  const policy = createToolPolicy(null);
  it.each([
    ['deploy_service', 'require_approval'],
    ['start_maintenance', 'require_approval'],
    ['end_maintenance', 'require_approval'],
    ['check_health', 'allow'],
    ['list_tasks', 'allow'],
    ['exec', 'require_approval'], // undeclared: treated as dangerous
  ] as const)('%s -> %s', (tool, action) => {
    expect(policy.decide({ tenant: 'demo', username: 'alice' }, tool).action).toBe(action);
  });
  it('an explicit built-in (MCP annotations) wins over the catalog lookup', () => {
    expect(policy.decide({ tenant: 'demo', username: 'alice' }, 'everything_echo', 'allow').action).toBe('allow');
  });
});

describe('riskLevel', () => {
  it.each([
    ['allow', 'safe'],
    ['caution', 'caution'],
    ['require_approval', 'danger'],
    ['deny', 'forbidden'],
  ] as const)('%s -> %s', (action, level) => expect(riskLevel(action)).toBe(level));
});

describe('unknownRuleTools: names no tool answers to (typos)', () => {
  const r = PolicyRulesSchema.parse({
    tool_rules: { deploy_servce: 'deny', check_health: 'allow', filesystem_write_file: 'deny' },
    tenant_rules: { acme: { tools: { start_maintenance: 'allow', strat_maintenance: 'allow' } } },
    user_rules: { 'acme:root': { tools: { nope: 'deny' } } },
  });
  const known = new Set(['deploy_service', 'check_health', 'start_maintenance']);
  it('lists each with where it was named; MCP tools count by their server prefix', () => {
    expect(unknownRuleTools(r, known, ['filesystem_'])).toEqual(['deploy_servce (tool_rules)', 'nope (user_rules.acme:root)', 'strat_maintenance (tenant_rules.acme)']);
  });
  it('without the MCP server, its tool is unknown too; no rules: nothing', () => {
    expect(unknownRuleTools(r, known)).toContain('filesystem_write_file (tool_rules)');
    expect(unknownRuleTools(null, known)).toEqual([]);
  });
});
