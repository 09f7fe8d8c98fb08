/** Grants' pure parts (issue 27 item 2; issue 36 item 2): which rules may be granted and for how long, what a match matches, which calls a grant covers. */
import { describe, expect, it } from 'vitest';
import { grantCovers, grantMatches } from '../../../../server/db/grants.ts';
import { grantLimitS, grantOffer, MAX_GRANT_S, ruleHash, type PolicyDecision, type PolicyRule } from '../../../../server/policy/index.ts';
import { directGrantRefusal, grantRefusal } from '../../../../server/approvals/grants.ts';

describe('grantLimitS', () => {
  it.each([
    ['a plain approval rule: 8 h', { action: 'require_approval' as const }, MAX_GRANT_S],
    ['its max_grant_s', { action: 'require_approval' as const, max_grant_s: 600 }, 600],
    ['grantable: false', { action: 'require_approval' as const, grantable: false }, 0],
    ['two approvers', { action: 'require_approval' as const, approvals: { count: 2, roles: [], users: [], distinct_from_requester: false } }, 0],
    ['a step-up', { action: 'require_approval' as const, step_up: 'passkey' as const }, 0],
    ['deny', { action: 'deny' as const }, 0],
    ['allow (nothing to grant)', { action: 'allow' as const }, 0],
  ])('%s', (_, rule, limit) => {
    expect(grantLimitS(rule)).toBe(limit);
  });
});

describe('grantMatches', () => {
  const args = { service: 'payments-api', environment: 'staging', replicas: 3, opts: { b: 1, a: 2 } };
  it('each named argument must equal, canonically; the others are free', () => {
    expect(grantMatches({ environment: 'staging' }, args)).toBe(true);
    expect(grantMatches({ opts: { a: 2, b: 1 } }, args)).toBe(true);
    expect(grantMatches({}, args)).toBe(true);
  });
  it('a different value, a different type, or a missing argument does not match', () => {
    expect(grantMatches({ environment: 'production' }, args)).toBe(false);
    expect(grantMatches({ replicas: '3' }, args)).toBe(false);
    expect(grantMatches({ region: 'eu' }, args)).toBe(false);
    expect(grantMatches({ opts: { a: 2 } }, args)).toBe(false);
  });
});

describe('grantOffer: what an approval offers, and its default match', () => {
  const args = { service: 'payments-api', version: '2.0.0', environment: 'staging' };
  it('the values of the arguments the tool marks as scope', () => {
    expect(grantOffer({ action: 'require_approval' }, args, ['environment'])).toEqual({ max_ttl_s: MAX_GRANT_S, match: { environment: 'staging' } });
  });
  it("and those the rule's when names; the rule's max_grant_s is the limit", () => {
    expect(grantOffer({ action: 'require_approval', when: { service: ['payments-api'] }, max_grant_s: 600 }, args, ['environment'])).toEqual({ max_ttl_s: 600, match: { environment: 'staging', service: 'payments-api' } });
  });
  it('with no scope named (an MCP tool under a plain rule): the exact call', () => {
    expect(grantOffer({ action: 'require_approval' }, args)).toEqual({ max_ttl_s: MAX_GRANT_S, match: args });
  });
  it('none when the match would be empty under a rule without when (a call with no arguments: it would cover every call)', () => {
    expect(grantOffer({ action: 'require_approval' }, {})).toBeNull();
    expect(grantOffer({ action: 'require_approval' }, { version: '2' }, ['environment'])).toBeNull();
  });
  it('none for a rule that is never grantable', () => {
    expect(grantOffer({ action: 'require_approval', grantable: false }, args, ['environment'])).toBeNull();
    expect(grantOffer({ action: 'require_approval', step_up: 'passkey' }, args, ['environment'])).toBeNull();
    expect(grantOffer({ action: 'deny' }, args)).toBeNull();
  });
});

describe('grantRefusal and directGrantRefusal', () => {
  const offer = { max_ttl_s: 3600, match: { environment: 'staging' } };
  const args = { service: 'web', environment: 'staging' };
  const plain = { hash: 'h', scoped: false };
  it('refuses what the rule does not offer, a longer grant (with the limit), a tenant grant by a non-admin, a match not covering the call', () => {
    expect(grantRefusal(null, { ttl_s: 60 }, { role: 'admin' }, args, plain)?.code).toBe('FORBIDDEN');
    expect(grantRefusal(offer, { ttl_s: 3601 }, { role: 'admin' }, args, plain)).toMatchObject({ code: 'VALIDATION_ERROR', details: { max_ttl_s: 3600 } });
    expect(grantRefusal(offer, { ttl_s: 60, scope: 'tenant' }, { role: 'operator' }, args, plain)?.code).toBe('FORBIDDEN');
    expect(grantRefusal(offer, { ttl_s: 60, match: { environment: 'production' } }, { role: 'admin' }, args, plain)?.code).toBe('VALIDATION_ERROR');
    // An approval that does not know the rule its grant would be made under (older rows) offers none.
    expect(grantRefusal(offer, { ttl_s: 60 }, { role: 'admin' }, args, null)?.code).toBe('FORBIDDEN');
  });
  it('an empty match is refused unless the rule itself is scoped (issue 36 item 2)', () => {
    expect(grantRefusal(offer, { ttl_s: 60, match: {} }, { role: 'operator' }, args, plain)).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('every call') });
    expect(grantRefusal({ ...offer, match: {} }, { ttl_s: 60 }, { role: 'operator' }, args, plain)?.code).toBe('VALIDATION_ERROR');
    expect(grantRefusal(offer, { ttl_s: 60, match: {} }, { role: 'operator' }, args, { hash: 'h', scoped: true })).toBeNull();
  });
  it('allows the rule terms, a wider match that still covers the call, and a tenant grant by an admin', () => {
    expect(grantRefusal(offer, { ttl_s: 3600 }, { role: 'operator' }, args, plain)).toBeNull();
    expect(grantRefusal(offer, { ttl_s: 60, match: { environment: 'staging' } }, { role: 'operator' }, { ...args, version: '2' }, plain)).toBeNull();
    expect(grantRefusal(offer, { ttl_s: 60, scope: 'tenant' }, { role: 'admin' }, args, plain)).toBeNull();
  });
  const person = (role: string) => ({ id: 'u1', username: role, role, tenant: 'default' });
  const decided = (tool: string, rule: PolicyRule): PolicyDecision => ({ tool, action: rule.action, scope: `tool:${tool}`, level: 'tool', matched: true, reason: '', rule });
  it('POST /grants needs the right to decide the tool: its permission, and an approver of its rule', () => {
    const rule = { action: 'require_approval' as const };
    const staging = { environment: 'staging' };
    expect(directGrantRefusal(decided('deploy_service', rule), { ttl_s: 60, match: staging }, person('operator'))?.code).toBe('FORBIDDEN');
    expect(directGrantRefusal(decided('deploy_service', rule), { ttl_s: 60, match: staging }, person('admin'))).toBeNull();
    const adminsOnly = { action: 'require_approval' as const, approvals: { count: 1, roles: ['admin' as const], users: [], distinct_from_requester: true } };
    expect(directGrantRefusal(decided('start_maintenance', adminsOnly), { ttl_s: 60, match: { service: 'x' } }, person('operator'))?.code).toBe('FORBIDDEN');
    expect(directGrantRefusal(decided('start_maintenance', { action: 'require_approval', grantable: false }), { ttl_s: 60, match: { service: 'x' } }, person('operator'))?.code).toBe('FORBIDDEN');
  });
  it('POST /grants with an empty match under a rule without when: 400', () => {
    expect(directGrantRefusal(decided('start_maintenance', { action: 'require_approval' }), { ttl_s: 60, match: {} }, person('admin'))).toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});

describe('grantCovers: a grant covers a call only under the rule it was made under (issue 36 item 2)', () => {
  const rule = (hash: string, scoped = false) => ({ hash: () => hash, scoped });
  const args = { service: 'db-primary', duration_minutes: 30 };
  it('the same rule hash and a match the call satisfies', () => {
    expect(grantCovers({ match: { service: 'db-primary' }, ruleHash: 'r1' }, { args, rule: rule('r1') })).toBe(true);
    expect(grantCovers({ match: { service: 'db-primary' }, ruleHash: 'r1' }, { args, rule: rule('r2') })).toBe(false);
    expect(grantCovers({ match: { service: 'orders-api' }, ruleHash: 'r1' }, { args, rule: rule('r1') })).toBe(false);
  });
  it('an empty match only under a scoped rule; a grant with no rule (made before migration 241) covers nothing', () => {
    expect(grantCovers({ match: {}, ruleHash: 'r1' }, { args, rule: rule('r1') })).toBe(false);
    expect(grantCovers({ match: {}, ruleHash: 'r1' }, { args, rule: rule('r1', true) })).toBe(true);
    expect(grantCovers({ match: { service: 'db-primary' }, ruleHash: null }, { args, rule: rule('r1') })).toBe(false);
  });
  it("the rule's hash is worked out only when the match fits", () => {
    let asked = 0;
    const counted = { hash: () => (asked++, 'r1'), scoped: false };
    grantCovers({ match: { service: 'orders-api' }, ruleHash: 'r1' }, { args, rule: counted });
    expect(asked).toBe(0);
    grantCovers({ match: { service: 'db-primary' }, ruleHash: 'r1' }, { args, rule: counted });
    expect(asked).toBe(1);
  });
});

describe('ruleHash: the identity of a deciding rule', () => {
  const base: PolicyDecision = { tool: 'start_maintenance', action: 'require_approval', scope: 'tool:start_maintenance', level: 'tool', matched: true, reason: 'x', rule: { action: 'require_approval', max_grant_s: 3600 }, entry: 1 };
  it('is the same for the same entry at the same place, whatever the reason or key order', () => {
    const reworded: PolicyDecision = { ...base, reason: 'other words', rule: { max_grant_s: 3600, action: 'require_approval' } };
    expect(ruleHash(reworded)).toBe(ruleHash(base));
  });
  it('changes with the entry, its index, its scope path or its tool', () => {
    const h = ruleHash(base);
    expect(ruleHash({ ...base, rule: { action: 'require_approval', max_grant_s: 600 } })).not.toBe(h);
    expect(ruleHash({ ...base, entry: 2 })).not.toBe(h);
    expect(ruleHash({ ...base, scope: 'tenant:demo' })).not.toBe(h);
    expect(ruleHash({ ...base, tool: 'end_maintenance' })).not.toBe(h);
  });
});
