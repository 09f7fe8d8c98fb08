/**
 * The rule syntax of issue 26 (server/policy/rule.ts): an action, an object, or a list (first match
 * wins) at every rule level; `when` on the call's arguments; approvers, escalation, timeout, grants
 * and step-up validated at load with a message naming the line; /policy/check's `tool_args`.
 */
import { describe, expect, it } from 'vitest';
import { createToolPolicy, decideToolPolicy, parsePolicyText, PolicyFileError, PolicyRulesSchema, possibleActions, ruleEntries, ruleIssues, type PolicyRules } from '../../../../server/policy/index.ts';

const prodDeploy = {
  action: 'require_approval',
  when: { environment: 'production' },
  approvals: { count: 2, roles: ['admin'], distinct_from_requester: true },
  escalate: { after_s: 600, roles: ['admin'] },
  timeout_s: 1800,
  grantable: false,
};

const rules: PolicyRules = PolicyRulesSchema.parse({
  default_action: 'caution',
  tool_rules: {
    deploy_service: [prodDeploy, { action: 'require_approval', when: { environment: ['staging', 'qa'] }, grantable: true, max_grant_s: 3600 }, 'allow'],
    start_maintenance: { action: 'require_approval', approvals: { count: 1, roles: ['admin'] } },
    end_maintenance: [{ action: 'deny', when: { service: 'billing' } }],
  },
  tenant_rules: { acme: { tools: { deploy_service: [{ action: 'deny', when: { service: 'ledger' } }] } } },
  user_rules: { 'acme:lead': { tools: { deploy_service: { action: 'require_approval', step_up: 'passkey' } } } },
});
const demo = { tenant: 'demo', username: 'op' };
const acme = { tenant: 'acme', username: 'op' };

describe('decideToolPolicy with rule lists and when', () => {
  it('the first matching entry decides, with its approvers, escalation and timeout', () => {
    const d = decideToolPolicy(rules, demo, 'deploy_service', 'require_approval', { service: 'web', environment: 'production' });
    expect(d).toMatchObject({ action: 'require_approval', scope: 'tool:deploy_service', level: 'tool', matched: true, entry: 0 });
    expect(d.rule).toEqual({
      action: 'require_approval',
      when: { environment: ['production'] },
      approvals: { count: 2, roles: ['admin'], users: [], distinct_from_requester: true },
      escalate: { after_s: 600, roles: ['admin'] },
      timeout_s: 1800,
      grantable: false,
    });
    expect(d.reason).toBe('Policy tool:deploy_service requires approval for deploy_service when environment=production');
  });
  it('a value out of a list matches; the entry keeps grantable and max_grant_s', () => {
    const d = decideToolPolicy(rules, demo, 'deploy_service', 'require_approval', { environment: 'qa' });
    expect(d).toMatchObject({ action: 'require_approval', entry: 1, rule: { grantable: true, max_grant_s: 3600 } });
  });
  it('no condition matches: the catch-all entry', () => {
    expect(decideToolPolicy(rules, demo, 'deploy_service', 'require_approval', { environment: 'dev' })).toMatchObject({ action: 'allow', entry: 2 });
  });
  it('equality is strict: "1" is not 1, and a missing argument never matches', () => {
    const r = PolicyRulesSchema.parse({ tool_rules: { x: [{ action: 'deny', when: { n: 1 } }, 'allow'] } });
    expect(decideToolPolicy(r, demo, 'x', 'allow', { n: 1 }).action).toBe('deny');
    expect(decideToolPolicy(r, demo, 'x', 'allow', { n: '1' }).action).toBe('allow');
    expect(decideToolPolicy(r, demo, 'x', 'allow', {}).action).toBe('allow');
  });
  it('every condition of a when must hold', () => {
    const r = PolicyRulesSchema.parse({ tool_rules: { x: [{ action: 'deny', when: { a: 1, b: [true, null] } }, 'allow'] } });
    expect(decideToolPolicy(r, demo, 'x', 'allow', { a: 1, b: null }).action).toBe('deny');
    expect(decideToolPolicy(r, demo, 'x', 'allow', { a: 1, b: false }).action).toBe('allow');
  });
  it('a level where no entry matches passes to the next level', () => {
    // acme's tenant rule only denies the ledger service; other deploys fall to tool_rules.
    expect(decideToolPolicy(rules, acme, 'deploy_service', 'require_approval', { service: 'ledger', environment: 'production' })).toMatchObject({ action: 'deny', scope: 'tenant:acme' });
    expect(decideToolPolicy(rules, acme, 'deploy_service', 'require_approval', { service: 'web', environment: 'production' })).toMatchObject({ scope: 'tool:deploy_service', entry: 0 });
  });
  it('no entry matches at any level: default_action, which never lowers the built-in', () => {
    expect(decideToolPolicy(rules, demo, 'end_maintenance', 'require_approval', { service: 'web' })).toMatchObject({ action: 'require_approval', scope: 'builtin', matched: false, rule: { action: 'require_approval' } });
    expect(decideToolPolicy(rules, demo, 'end_maintenance', 'require_approval', { service: 'billing' })).toMatchObject({ action: 'deny', scope: 'tool:end_maintenance' });
  });
  it('a single object is a rule too (user level, step-up)', () => {
    const d = decideToolPolicy(rules, { tenant: 'acme', username: 'lead' }, 'deploy_service', 'require_approval', { environment: 'production' });
    expect(d).toMatchObject({ scope: 'user:acme:lead', rule: { action: 'require_approval', step_up: 'passkey' } });
    expect(d.entry).toBeUndefined();
  });
  it('a plain action keeps its old decision, now with its rule', () => {
    const r = PolicyRulesSchema.parse({ tool_rules: { exec: 'deny' } });
    expect(decideToolPolicy(r, demo, 'exec', 'require_approval')).toEqual({ tool: 'exec', action: 'deny', scope: 'tool:exec', level: 'tool', matched: true, reason: 'Policy tool:exec denies exec', rule: { action: 'deny' } });
  });
  it('createToolPolicy passes the arguments', () => {
    const policy = createToolPolicy(rules);
    expect(policy.decide(demo, 'deploy_service', undefined, { environment: 'production' }).rule.approvals?.count).toBe(2);
    expect(policy.decide(demo, 'deploy_service').action).toBe('allow');
  });
});

describe('possibleActions: whether a call may pause, before its arguments are known', () => {
  it('collects the entries up to a catch-all, then stops', () => {
    expect([...possibleActions(rules, demo, 'deploy_service', 'require_approval')].sort()).toEqual(['allow', 'require_approval']);
  });
  it('conditional entries only: the next levels and the default count too', () => {
    expect([...possibleActions(rules, acme, 'deploy_service', 'require_approval')].sort()).toEqual(['allow', 'deny', 'require_approval']);
    expect([...possibleActions(rules, demo, 'end_maintenance', 'require_approval')].sort()).toEqual(['deny', 'require_approval']);
  });
  it('no rules: the built-in', () => {
    expect([...possibleActions(null, demo, 'list_tasks', 'allow')]).toEqual(['allow']);
  });
});

describe('ruleEntries: the normal form', () => {
  it('fills approvals defaults and wraps scalars of when', () => {
    expect(ruleEntries({ action: 'require_approval', when: { env: 'prod' }, approvals: { count: 1 } })).toEqual([
      { action: 'require_approval', when: { env: ['prod'] }, approvals: { count: 1, roles: [], users: [], distinct_from_requester: false } },
    ]);
    expect(ruleEntries('allow')).toEqual([{ action: 'allow' }]);
  });
});

// [name, rule, path of the issue, what it says]
const badRules: Array<[string, unknown, Array<string | number>, RegExp]> = [
  ['an unknown action', 'maybe', [], /expected one of allow, caution, require_approval, deny, or a rule/],
  ['an empty list', [], [], /empty list/],
  ['an unknown key', { action: 'allow', approver: 'x' }, [], /unknown key "approver" \(a rule holds action, when, approvals/],
  ['no action', { when: { a: 1 } }, ['action'], /missing/],
  ['an empty when', { action: 'deny', when: {} }, ['when'], /at least one argument/],
  ['an object in when', { action: 'deny', when: { a: { b: 1 } } }, ['when', 'a'], /string, number, boolean or null/],
  ['an empty list in when', { action: 'deny', when: { a: [] } }, ['when', 'a'], /non-empty list/],
  ['approvals on an allow', { action: 'allow', approvals: { count: 1 } }, ['approvals'], /only a require_approval rule has approvals \(this one is allow\)/],
  ['approvals count 0 (the floor)', { action: 'require_approval', approvals: { count: 0 } }, ['approvals', 'count'], /from 1 to 10 \(approval needs at least one approver\)/],
  ['approvals count not whole', { action: 'require_approval', approvals: { count: 1.5 } }, ['approvals', 'count'], /whole number/],
  ['approvals without count', { action: 'require_approval', approvals: { roles: ['admin'] } }, ['approvals', 'count'], /missing/],
  ['an unknown role', { action: 'require_approval', approvals: { count: 1, roles: ['root'] } }, ['approvals', 'roles', 0], /unknown role "root" \(expected viewer, operator, admin\)/],
  ['an unknown approvals key', { action: 'require_approval', approvals: { count: 1, distinct: true } }, ['approvals'], /unknown key "distinct"/],
  ['too few named users', { action: 'require_approval', approvals: { count: 2, users: ['ann', 'ann'] } }, ['approvals', 'count'], /only 1 users named and no roles: it could never be approved/],
  ['distinct not a boolean', { action: 'require_approval', approvals: { count: 1, distinct_from_requester: 'yes' } }, ['approvals', 'distinct_from_requester'], /true or false/],
  ['escalate without roles', { action: 'require_approval', escalate: { after_s: 60 } }, ['escalate', 'roles'], /missing/],
  ['escalate after the timeout', { action: 'require_approval', timeout_s: 60, escalate: { after_s: 60, roles: ['admin'] } }, ['escalate', 'after_s'], /not before the timeout \(60 s\): it would never escalate/],
  ['a timeout of zero', { action: 'require_approval', timeout_s: 0 }, ['timeout_s'], /whole seconds/],
  ['a timeout on a deny', { action: 'deny', timeout_s: 60 }, ['timeout_s'], /only a require_approval rule has timeout_s/],
  ['step_up other than passkey', { action: 'require_approval', step_up: 'totp' }, ['step_up'], /expected "passkey"/],
  ['grantable two-person rule', { action: 'require_approval', approvals: { count: 2 }, grantable: true }, ['grantable'], /never grantable/],
  ['grantable step-up rule', { action: 'require_approval', step_up: 'passkey', grantable: true }, ['grantable'], /never grantable/],
  ['grantable on a deny', { action: 'deny', grantable: true }, ['grantable'], /only a require_approval rule has grantable/],
  ['max_grant_s over 8 h', { action: 'require_approval', max_grant_s: 28_801 }, ['max_grant_s'], /from 1 to 28800 \(8 h\)/],
  ['max_grant_s on a rule not grantable', { action: 'require_approval', grantable: false, max_grant_s: 60 }, ['max_grant_s'], /not grantable/],
  ['an entry after a catch-all', ['allow', { action: 'deny', when: { a: 1 } }], [1], /never reached: entry 0 has no "when"/],
  ['a bad entry in a list', [{ action: 'deny', when: { a: 1 } }, 'nope'], [1], /expected one of/],
];

describe('ruleIssues: one clear message per mistake', () => {
  it.each(badRules)('%s', (_name, rule, path, what) => {
    const issues = ruleIssues(rule);
    expect(issues.map((i) => i.path)).toContainEqual(path);
    expect(issues.find((i) => JSON.stringify(i.path) === JSON.stringify(path))!.message).toMatch(what);
  });
  it('a full rule is valid', () => {
    expect(ruleIssues([prodDeploy, { action: 'require_approval', when: { environment: 'staging' }, approvals: { count: 2, users: ['ann', 'bob'] }, grantable: false }, 'allow'])).toEqual([]);
  });
});

describe('parsePolicyText: a bad rule names its line and path', () => {
  const cases: Array<[string, string, number, RegExp]> = [
    [
      'unknown key in a rule of a list',
      'tool_rules:\n  deploy_service:\n    - action: require_approval\n      when: {environment: production}\n      aprovals: {count: 2}\n    - allow\n',
      5,
      /tool_rules\.deploy_service\.0: unknown key "aprovals"/,
    ],
    ['an unknown role in a tenant rule', 'tenant_rules:\n  acme:\n    tools:\n      deploy_service:\n        action: require_approval\n        approvals:\n          count: 1\n          roles: [root]\n', 8, /tenant_rules\.acme\.tools\.deploy_service\.approvals\.roles\.0: unknown role "root"/],
    ['an old plain action still says what it expects', 'tool_rules:\n  exec: maybe\n', 2, /tool_rules\.exec: expected one of allow, caution, require_approval, deny/],
  ];
  it.each(cases)('%s', (_name, text, line, what) => {
    let error: unknown;
    try {
      parsePolicyText(text, 'p.yaml');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PolicyFileError);
    expect((error as Error).message).toContain(`the policy file p.yaml line ${line}:`);
    expect((error as Error).message).toMatch(what);
  });
  it('a file with every field loads as written', () => {
    const text = 'tool_rules:\n  deploy_service:\n    - action: require_approval\n      when: {environment: production}\n      approvals: {count: 2, roles: [admin], distinct_from_requester: true}\n      escalate: {after_s: 600, roles: [admin]}\n      timeout_s: 1800\n      grantable: false\n    - allow\n';
    expect(parsePolicyText(text, 'p.yaml').tool_rules.deploy_service).toEqual([{ ...prodDeploy }, 'allow']);
  });
});
