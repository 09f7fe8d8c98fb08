/**
 * Who may see and decide an approval, and when its decisions end it (issue 26, M-of-N):
 * server/approvals/approvers.ts, table-tested.
 */
import { describe, expect, it } from 'vitest';
import { attemptRefusal, DEFAULT_TERMS, decisionRefusal, describeApprovers, mayApprove, mayDeny, mayView, tally, termsAt, type ApproverTerms, type Person } from '../../../../server/approvals/approvers.ts';

const person = (id: string, role: string, tenant = 'demo'): Person => ({ id, username: id, role, tenant });
const requester = { id: 'op', tenant: 'demo' };
const op = person('op', 'operator');
const admin = person('admin', 'admin');
const admin2 = person('admin2', 'admin');
const viewer = person('ann', 'viewer');
const otherTenant = person('admin-x', 'admin', 'acme');

const twoAdmins: ApproverTerms = { required: 2, roles: ['admin'], users: [], distinctFromRequester: true };
const adminsOnly: ApproverTerms = { required: 1, roles: ['admin'], users: [], distinctFromRequester: false };
const ann: ApproverTerms = { required: 1, roles: [], users: ['ann'], distinctFromRequester: false };
const annThenAdmins: ApproverTerms = { ...ann, escalated: ['admin'] };
const adminsThenViewers: ApproverTerms = { ...twoAdmins, escalated: ['viewer', 'operator'] };

// [name, terms, who, view, approve, deny]
const table: Array<[string, ApproverTerms, Person, boolean, boolean, boolean]> = [
  ['default: the requester decides', DEFAULT_TERMS, op, true, true, true],
  ['default: any admin of the tenant decides', DEFAULT_TERMS, admin, true, true, true],
  ['default: a viewer sees nothing', DEFAULT_TERMS, viewer, false, false, false],
  ['another tenant never', DEFAULT_TERMS, otherTenant, false, false, false],
  ['routed to admins: the operator requester may deny, not approve', adminsOnly, op, true, false, true],
  ['routed to admins: an admin approves', adminsOnly, admin, true, true, true],
  ['two admins, distinct: an admin requester may only deny', twoAdmins, { ...admin, id: 'op' }, true, false, true],
  ['named user: ann (a viewer) sees and approves', ann, viewer, true, true, true],
  ['named user: an admin sees it (approvals:decide) but may not decide', ann, admin, true, false, false],
  ['named users, another tenant: never', ann, { ...viewer, tenant: 'acme' }, false, false, false],
  ['escalated to admins: an admin now decides', annThenAdmins, admin, true, true, true],
  ['escalated to admins: ann still decides', annThenAdmins, viewer, true, true, true],
  ['escalated: another tenant still never', annThenAdmins, otherTenant, false, false, false],
  ['escalated to viewers: a viewer sees and decides', adminsThenViewers, viewer, true, true, true],
  ['escalated, distinct: the requester still may not approve', adminsThenViewers, op, true, false, true],
];

describe('mayView, mayApprove, mayDeny', () => {
  it.each(table)('%s', (_name, terms, who, view, approve, deny) => {
    expect([mayView(terms, who, requester), mayApprove(terms, who, requester), mayDeny(terms, who, requester)]).toEqual([view, approve, deny]);
  });
});

describe('decisionRefusal: 404 when invisible, 403 when visible but not allowed', () => {
  it('invisible is not found', () => {
    expect(decisionRefusal(DEFAULT_TERMS, viewer, requester, 'approve')).toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
  });
  it('the requester of a two-person request is told why', () => {
    expect(decisionRefusal(twoAdmins, { ...admin, id: 'op' }, requester, 'approve')).toEqual({ code: 'FORBIDDEN', message: 'This action needs approvers other than you: you may deny your own request, not approve it.' });
    expect(decisionRefusal(twoAdmins, { ...admin, id: 'op' }, requester, 'deny')).toBeNull();
  });
  it('a visible non-approver is refused with the approvers named', () => {
    expect(decisionRefusal(ann, admin, requester, 'approve')).toEqual({ code: 'FORBIDDEN', message: 'You are not an approver of this action (1 of ann).' });
  });
  it('an approver may', () => {
    expect(decisionRefusal(twoAdmins, admin2, requester, 'approve')).toBeNull();
  });
  it('describes the approvers', () => {
    expect(describeApprovers(twoAdmins)).toBe('2 of role admin, not the requester');
    expect(describeApprovers(DEFAULT_TERMS)).toBe('1 of the requester or an admin');
  });
});

describe('attemptRefusal: the pre-check every transport shares (v1, /chat, MCP, AG-UI)', () => {
  it('is decisionRefusal first, then 409 for an approval counted already; a deny after it still goes', () => {
    expect(attemptRefusal(twoAdmins, { ...admin, id: 'op' }, requester, 'approve', [])).toMatchObject({ code: 'FORBIDDEN' });
    expect(attemptRefusal(DEFAULT_TERMS, viewer, requester, 'approve', [])).toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
    const counted = [{ userId: 'admin2', decision: 'approve' as const }];
    expect(attemptRefusal(twoAdmins, admin2, requester, 'approve', counted)).toMatchObject({ code: 'CONFLICT' });
    expect(attemptRefusal(twoAdmins, admin, requester, 'approve', counted)).toBeNull();
    expect(attemptRefusal(twoAdmins, admin2, requester, 'deny', counted)).toBeNull();
  });
});

describe('tally', () => {
  it('pending until the count, then approved', () => {
    expect(tally(twoAdmins, [{ userId: 'admin', decision: 'approve' }])).toEqual({ state: 'pending', approved: 1 });
    expect(tally(twoAdmins, [{ userId: 'admin', decision: 'approve' }, { userId: 'admin2', decision: 'approve' }])).toEqual({ state: 'approved', approved: 2 });
  });
  it('no approver counts twice', () => {
    expect(tally(twoAdmins, [{ userId: 'admin', decision: 'approve' }, { userId: 'admin', decision: 'approve' }])).toEqual({ state: 'pending', approved: 1 });
  });
  it('a denial by any approver ends it', () => {
    expect(tally(twoAdmins, [{ userId: 'admin', decision: 'approve' }, { userId: 'admin2', decision: 'deny' }])).toEqual({ state: 'denied', approved: 1 });
  });
  it('one of one approves at once (the default)', () => {
    expect(tally(DEFAULT_TERMS, [{ userId: 'op', decision: 'approve' }]).state).toBe('approved');
  });
});

describe('termsAt: escalation routes as well as notifies (issue 26 item 5)', () => {
  const opened = new Date('2026-12-05T10:00:00Z');
  const escalate = { afterS: 60, roles: ['admin'] };
  it('before escalate.after_s the terms are as the rule wrote them', () => {
    expect(termsAt(ann, escalate, opened, new Date('2026-12-05T10:00:59.999Z'))).toBe(ann);
  });
  it('from escalate.after_s on, the escalation roles may decide too', () => {
    const now = termsAt(ann, escalate, opened, new Date('2026-12-05T10:01:00Z'));
    expect(now).toEqual({ ...ann, escalated: ['admin'] });
    expect([mayApprove(ann, admin, requester), mayApprove(now, admin, requester)]).toEqual([false, true]);
    expect(describeApprovers(now)).toBe('1 of ann, or since escalation role admin');
  });
  it('no escalation, or one with no roles: unchanged', () => {
    const late = new Date('2026-12-06T00:00:00Z');
    expect(termsAt(ann, null, opened, late)).toBe(ann);
    expect(termsAt(ann, { afterS: 1, roles: [] }, opened, late)).toBe(ann);
  });
});
