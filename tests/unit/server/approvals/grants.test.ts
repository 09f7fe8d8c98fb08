/** Grants' pure parts (issue 27 item 2): which rules may be granted and for how long, and what a match matches. */
import { describe, expect, it } from 'vitest';
import { grantMatches } from '../../../../server/db/grants.ts';
import { grantLimitS, grantOffer, MAX_GRANT_S } from '../../../../server/policy/index.ts';
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
  it('none for a rule that is never grantable', () => {
    expect(grantOffer({ action: 'require_approval', grantable: false }, args, ['environment'])).toBeNull();
    expect(grantOffer({ action: 'require_approval', step_up: 'passkey' }, args, ['environment'])).toBeNull();
    expect(grantOffer({ action: 'deny' }, args)).toBeNull();
  });
});

describe('grantRefusal and directGrantRefusal', () => {
  const offer = { max_ttl_s: 3600, match: { environment: 'staging' } };
  const args = { service: 'web', environment: 'staging' };
  it('refuses what the rule does not offer, a longer grant (with the limit), a tenant grant by a non-admin, a match not covering the call', () => {
    expect(grantRefusal(null, { ttl_s: 60 }, { role: 'admin' }, args)?.code).toBe('FORBIDDEN');
    expect(grantRefusal(offer, { ttl_s: 3601 }, { role: 'admin' }, args)).toMatchObject({ code: 'VALIDATION_ERROR', details: { max_ttl_s: 3600 } });
    expect(grantRefusal(offer, { ttl_s: 60, scope: 'tenant' }, { role: 'operator' }, args)?.code).toBe('FORBIDDEN');
    expect(grantRefusal(offer, { ttl_s: 60, match: { environment: 'production' } }, { role: 'admin' }, args)?.code).toBe('VALIDATION_ERROR');
  });
  it('allows the rule terms, a wider match that still covers the call, and a tenant grant by an admin', () => {
    expect(grantRefusal(offer, { ttl_s: 3600 }, { role: 'operator' }, args)).toBeNull();
    expect(grantRefusal(offer, { ttl_s: 60, match: {} }, { role: 'operator' }, args)).toBeNull();
    expect(grantRefusal(offer, { ttl_s: 60, scope: 'tenant' }, { role: 'admin' }, args)).toBeNull();
  });
  const person = (role: string) => ({ id: 'u1', username: role, role, tenant: 'default' });
  it('POST /grants needs the right to decide the tool: its permission, and an approver of its rule', () => {
    const rule = { action: 'require_approval' as const };
    expect(directGrantRefusal('deploy_service', rule, { ttl_s: 60, match: {} }, person('operator'))?.code).toBe('FORBIDDEN');
    expect(directGrantRefusal('deploy_service', rule, { ttl_s: 60, match: {} }, person('admin'))).toBeNull();
    const adminsOnly = { action: 'require_approval' as const, approvals: { count: 1, roles: ['admin' as const], users: [], distinct_from_requester: true } };
    expect(directGrantRefusal('start_maintenance', adminsOnly, { ttl_s: 60, match: {} }, person('operator'))?.code).toBe('FORBIDDEN');
    expect(directGrantRefusal('start_maintenance', { action: 'require_approval', grantable: false }, { ttl_s: 60, match: {} }, person('operator'))?.code).toBe('FORBIDDEN');
  });
});
