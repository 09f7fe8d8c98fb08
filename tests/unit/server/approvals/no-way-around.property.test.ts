/**
 * No way around a rule (issue 36 items 1 and 2), as properties over random policies (fast-check),
 * on the pure decision functions the decision step and the call-time grant check use:
 * - an edit: whatever the rule of the proposed call and of the edited one, the terms the edited
 *   approval gets (`editedTerms`) never need less than a direct call with the edited arguments
 *   would: everyone who may approve it (at any time, escalation included) could approve the direct
 *   call, its count is not lower, a step-up stays (the proof must be over the edited hash), and it
 *   expires no later;
 * - a grant, made through an approve (`grantTerms` + `grantRefusal`) or `POST /grants`
 *   (`directGrantRefusal`): any later call it covers (`grantCovers`, as agent/tools/grant.ts asks
 *   it) is one whose direct approval its maker could have given alone: one approver, no step-up, a
 *   maker who is an approver of that call's rule, and a match that is not empty unless the rule is scoped.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decisionRefusal, DEFAULT_TERMS, termsAt, type Person } from '../../../../server/approvals/approvers.ts';
import { stepUpProof } from '../../../../server/approvals/decide.ts';
import { editedTerms, termsRow, type RowTerms } from '../../../../server/approvals/edit.ts';
import { directGrantRefusal, grantRefusal } from '../../../../server/approvals/grants.ts';
import { grantCovers } from '../../../../server/db/grants.ts';
import type { PasskeyProof } from '../../../../server/audit/passkey.ts';
import {
  approvalTermsOf, decideToolPolicy, grantLimitS, grantTerms, ruleHash, ruleIssues, ruleScoped,
  type PolicyDecision, type PolicyRules, type ToolAction,
} from '../../../../server/policy/index.ts';
import type { RuleObject } from '../../../../server/policy/rule.ts';

const TOOL = 'start_maintenance';
const SERVICES = ['orders-api', 'db-primary', 'search-api'] as const;
const WINDOWS = [30, 45] as const;
const ROLES = ['viewer', 'operator', 'admin'] as const;
const DEFAULT_TIMEOUT_S = 300;
const subject = { tenant: 'demo', username: 'req' };
const requester = { id: 'req', tenant: 'demo' };
/** Everyone who might decide: each role, the requester, and two named users. */
const people: Person[] = [
  { id: 'req', username: 'req', role: 'operator', tenant: 'demo' },
  ...ROLES.map((role) => ({ id: `u-${role}`, username: `user-${role}`, role, tenant: 'demo' })),
  { id: 'ann', username: 'ann', role: 'viewer', tenant: 'demo' },
  { id: 'bob', username: 'bob', role: 'operator', tenant: 'demo' },
];

const args = fc.record({ service: fc.constantFrom(...SERVICES), duration_minutes: fc.constantFrom(...WINDOWS) });
const when = fc.oneof(
  fc.record({ service: fc.subarray([...SERVICES], { minLength: 1 }) }),
  fc.record({ duration_minutes: fc.subarray([...WINDOWS], { minLength: 1 }) }),
);

/** One valid require_approval entry (rule.ts's constraints kept by construction). */
const approvalEntry = fc
  .record({
    approvals: fc.option(fc.record({ count: fc.integer({ min: 1, max: 2 }), roles: fc.subarray([...ROLES], { minLength: 1 }), users: fc.option(fc.subarray(['ann', 'bob'], { minLength: 1 }), { nil: undefined }), distinct_from_requester: fc.boolean() }), { nil: undefined }),
    step_up: fc.option(fc.constant('passkey' as const), { nil: undefined }),
    timeout_s: fc.option(fc.integer({ min: 60, max: 3600 }), { nil: undefined }),
    escalate_after_s: fc.option(fc.integer({ min: 1, max: 59 }), { nil: undefined }),
    escalate_roles: fc.subarray([...ROLES], { minLength: 1 }),
    grantable: fc.option(fc.boolean(), { nil: undefined }),
    max_grant_s: fc.option(fc.integer({ min: 60, max: 28800 }), { nil: undefined }),
  })
  .map((r) => {
    const entry: RuleObject = { action: 'require_approval' };
    if (r.approvals) entry.approvals = { count: r.approvals.count, roles: r.approvals.roles, ...(r.approvals.users ? { users: r.approvals.users } : {}), distinct_from_requester: r.approvals.distinct_from_requester };
    if (r.step_up) entry.step_up = r.step_up;
    if (r.timeout_s) entry.timeout_s = r.timeout_s;
    if (r.escalate_after_s) entry.escalate = { after_s: r.escalate_after_s, roles: r.escalate_roles };
    const strict = (r.approvals?.count ?? 1) > 1 || !!r.step_up;
    if (!strict && r.grantable !== undefined) entry.grantable = r.grantable;
    if (!strict && entry.grantable !== false && r.max_grant_s) entry.max_grant_s = r.max_grant_s;
    return entry;
  });
const entry = fc.oneof({ weight: 3, arbitrary: approvalEntry }, { weight: 1, arbitrary: fc.constantFrom<ToolAction>('allow', 'caution', 'deny').map((action): RuleObject => ({ action })) });

/** A policy: a few scoped entries, maybe a catch-all, at the tool level and maybe the tenant level. */
const rule = fc.tuple(fc.array(fc.tuple(entry, when), { maxLength: 3 }), fc.option(entry, { nil: undefined })).map(([scoped, last]) => [...scoped.map(([e, w]) => ({ ...e, when: w })), ...(last ? [last] : [])]);
const policy = fc.record({ tool: rule, tenant: fc.option(rule, { nil: undefined }) }).map(({ tool, tenant }): PolicyRules => ({
  tool_rules: tool.length ? { [TOOL]: tool } : {},
  tenant_rules: tenant?.length ? { demo: { tools: { [TOOL]: tenant } } } : {},
  user_rules: {},
  service_rules: {},
}));
const valid = (p: PolicyRules) => [...Object.values(p.tool_rules), ...Object.values(p.tenant_rules).flatMap((t) => Object.values(t.tools))].every((r) => ruleIssues(r).length === 0);

const decide = (p: PolicyRules, a: Record<string, unknown>) => decideToolPolicy(p, subject, TOOL, 'require_approval', a);
const createdAt = new Date('2026-12-07T10:00:00Z');

/** What a direct call under this decision needs (decide.ts openApprovals, as a row). */
function directTerms(d: PolicyDecision): RowTerms {
  const t = approvalTermsOf(d.rule);
  return {
    terms: termsRow(t) ?? { ...DEFAULT_TERMS, roles: [], users: [] },
    escalate: t?.escalate ? { afterS: t.escalate.after_s, roles: [...t.escalate.roles] } : null,
    stepUp: t?.step_up ?? null,
    expiresAt: new Date(createdAt.getTime() + (t?.timeout_s ?? DEFAULT_TIMEOUT_S) * 1000),
  };
}

/** Everyone who may approve under these terms at `at`. */
const approvers = (r: RowTerms, at: Date) => people.filter((p) => decisionRefusal(termsAt(r.terms, r.escalate, createdAt, at), p, requester, 'approve') === null).map((p) => p.id);
/** The moments where who may approve can change: the start, each escalation, long after. */
const moments = (...rows: RowTerms[]) => [0, ...rows.flatMap((r) => (r.escalate ? [r.escalate.afterS] : [])), 86_400].map((s) => new Date(createdAt.getTime() + s * 1000));

const PROOF = {} as PasskeyProof;

describe('an edit never needs less than a direct call with the edited arguments', () => {
  it('approvers at every moment, count, step-up (over the edited hash) and expiry', () => {
    fc.assert(
      fc.property(policy, args, args, (p, proposed, edited) => {
        fc.pre(valid(p));
        const asked = decide(p, proposed);
        fc.pre(asked.action === 'require_approval');
        const row = { ...directTerms(asked), createdAt };
        const after = decide(p, edited);
        // checkEdit refuses an edit of a step-up approval and an edit into a deny before any terms.
        fc.pre(!row.stepUp && after.action !== 'deny');
        const got = editedTerms(row, after, DEFAULT_TIMEOUT_S);
        if (after.action !== 'require_approval') return; // a direct call would need nothing
        const direct = directTerms(after);
        for (const at of moments(got, direct)) {
          const mayDirect = new Set(approvers(direct, at));
          const more = approvers(got, at).filter((id) => !mayDirect.has(id));
          expect(more, `may approve the edit at ${at.toISOString()}, not the direct call`).toEqual([]);
        }
        expect(got.terms.required).toBeGreaterThanOrEqual(direct.terms.required);
        expect(got.expiresAt.getTime()).toBeLessThanOrEqual(direct.expiresAt.getTime());
        if (direct.stepUp) {
          // The decision step: a proof over the proposed call does not approve the edited one.
          const approval = { stepUp: got.stepUp, actionHash: 'proposed', finalActionHash: 'edited' };
          expect(() => stepUpProof(approval, 'approve', { method: 'POST', path: '/x', passkey: { actionHash: 'proposed', proof: PROOF } })).toThrow();
          expect(() => stepUpProof(approval, 'approve', undefined)).toThrow();
        }
      }),
      { numRuns: 3000 },
    );
  }, 60_000);
});

/** The call-time check (agent/tools/grant.ts grantedCall with db/grants.ts grantCovers). */
function covers(grant: { match: Record<string, unknown>; ruleHash: string }, p: PolicyRules, call: Record<string, unknown>): PolicyDecision | null {
  const d = decide(p, call);
  if (d.action !== 'require_approval' || grantLimitS(d.rule) <= 0) return null;
  return grantCovers(grant, { args: call, rule: { hash: () => ruleHash(d), scoped: ruleScoped(d.rule) } }) ? d : null;
}

/** What covering `call` (by `forWhom`) under decision `d` must mean: its maker alone could have approved it directly. */
function expectNoLess(d: PolicyDecision, maker: Person, match: Record<string, unknown>, forWhom: { id: string; tenant: string }) {
  const direct = directTerms(d);
  expect(direct.stepUp).toBeNull();
  expect(direct.terms.required).toBe(1);
  expect(decisionRefusal(direct.terms, maker, forWhom, 'approve')).toBeNull();
  expect(Object.keys(match).length > 0 || ruleScoped(d.rule)).toBe(true);
}

const matchOf = (a: Record<string, unknown>, keys: string[], other: Record<string, unknown>) => Object.fromEntries(keys.map((k, i) => [k, i % 2 ? other[k] : a[k]]));
const keysArb = fc.subarray(['service', 'duration_minutes']);

describe('a grant never covers a call its maker could not have approved alone', () => {
  it('made through an approve (the offer, or a given match, even empty)', () => {
    fc.assert(
      fc.property(policy, args, fc.option(fc.tuple(keysArb, args), { nil: undefined }), fc.constantFrom(...people), args, (p, asked, given, maker, later) => {
        fc.pre(valid(p));
        const d = decide(p, asked);
        fc.pre(d.action === 'require_approval');
        // The maker approved the call (alone: a grantable rule has one approver).
        fc.pre(decisionRefusal(directTerms(d).terms, maker, requester, 'approve') === null);
        const offered = grantTerms(d, asked, ['service']);
        const request = { ttl_s: 60, ...(given ? { match: matchOf(asked, given[0], given[1]) } : {}) };
        if (grantRefusal(offered.grant, request, maker, asked, offered.grantRule ?? null)) return;
        const grant = { match: request.match ?? offered.grant!.match, ruleHash: offered.grantRule!.hash };
        const hit = covers(grant, p, later);
        if (hit) expectNoLess(hit, maker, grant.match, requester);
      }),
      { numRuns: 500 },
    );
  }, 60_000);

  it('made through POST /grants (the rule a call with the match values falls under)', () => {
    // Makers who may run the tool (a viewer's grant is refused before any rule is asked).
    const makers = people.filter((x) => x.role !== 'viewer');
    fc.assert(
      fc.property(policy, fc.subarray(['service', 'duration_minutes'], { minLength: 1 }), args, fc.constantFrom(...makers), args, (p, keys, values, maker, later) => {
        fc.pre(valid(p));
        const match = matchOf(values, keys, values);
        const d = decide(p, match);
        if (directGrantRefusal(d, { ttl_s: 60, match }, maker)) return;
        const hit = covers({ match, ruleHash: ruleHash(d) }, p, later);
        // A grant made directly is for its maker: their own later calls.
        if (hit) expectNoLess(hit, maker, match, { id: maker.id, tenant: maker.tenant });
      }),
      { numRuns: 3000 },
    );
  }, 60_000);
});
