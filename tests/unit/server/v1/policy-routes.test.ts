import { describe, expect, it } from 'vitest';
import { checkSubject, rulesVisibleTo } from '../../../../server/v1/policy-routes.ts';
import { PolicyRulesSchema } from '../../../../server/policy/index.ts';

const alice = { tenant: 'demo', username: 'alice' };

describe('checkSubject: whom a dry run is about', () => {
  const rows: Array<[string, Parameters<typeof checkSubject>[0], Parameters<typeof checkSubject>[1], object | string]> = [
    ['a user, no keys: themselves', { user: alice, isService: false }, {}, alice],
    ['a user, their own key', { user: alice, isService: false }, { user_key: 'demo:alice', tenant_key: 'demo' }, alice],
    ['a user, another key', { user: alice, isService: false }, { user_key: 'demo:bob' }, 'FORBIDDEN'],
    ['a user, another tenant', { user: alice, isService: false }, { tenant_key: 'acme' }, 'FORBIDDEN'],
    ['on behalf (service + user): the user', { user: alice, isService: true }, { user_key: 'acme:root' }, 'FORBIDDEN'],
    ['the service: the tenant is the prefix of user_key', { user: null, isService: true }, { user_key: 'pska:user_primary' }, { tenant: 'pska', username: 'user_primary' }],
    ['the service: a tenant alone', { user: null, isService: true }, { tenant_key: 'pska' }, { tenant: 'pska', username: '' }],
    ['the service: nobody named', { user: null, isService: true }, {}, { tenant: '', username: '' }],
    ['keys that disagree', { user: null, isService: true }, { user_key: 'pska:x', tenant_key: 'acme' }, 'VALIDATION_ERROR'],
  ];
  it.each(rows)('%s', (_name, caller, body, expected) => {
    if (typeof expected === 'string') expect(() => checkSubject(caller, body)).toThrow(expect.objectContaining({ code: expected }));
    else expect(checkSubject(caller, body)).toEqual(expected);
  });
});

describe('rulesVisibleTo', () => {
  const rules = PolicyRulesSchema.parse({
    default_action: 'caution',
    tool_rules: { exec: 'deny' },
    tenant_rules: { demo: { tools: { a: 'allow' } }, acme: { tools: { a: 'deny' } } },
    user_rules: { 'demo:alice': { tools: { b: 'allow' } }, 'demo:bob': { tools: { b: 'deny' } }, 'acme:alice': { tools: { c: 'allow' } } },
    service_rules: { 'pska-client': { user_key_only: true } },
  });
  it("a user sees the shared rules, their tenant's and their own, nobody else's", () => {
    expect(rulesVisibleTo(rules, alice)).toEqual({
      default_action: 'caution', tool_rules: { exec: 'deny' }, tenant_rules: { demo: { tools: { a: 'allow' } } }, user_rules: { 'demo:alice': { tools: { b: 'allow' } } },
      // Which services may act by user_key alone is the operator's (issue 24).
      service_rules: {},
    });
  });
  it('the service (no user) sees everything; no file is null', () => {
    expect(rulesVisibleTo(rules, null)).toBe(rules);
    expect(rulesVisibleTo(null, alice)).toBeNull();
  });
});
