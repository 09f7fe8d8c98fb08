import { describe, expect, it } from 'vitest';
import {
  actionHash,
  decisionOf,
  hashArgs,
  resolvePendingApproval,
  resumeDecisions,
  selectApprovals,
} from '../../../../server/approvals/rules.ts';

describe('resolvePendingApproval', () => {
  const now = new Date('2026-12-02T12:00:00Z');
  const later = new Date('2026-12-02T12:05:00Z');
  const earlier = new Date('2026-12-02T11:59:59Z');
  it.each([
    ['confirm in time', later, 'confirm', 'approved', 'confirmed', { approved: true }],
    ['deny in time', later, 'deny', 'denied', 'denied', { approved: false, reason: 'denied' }],
    ['new message supersedes', later, null, 'denied', 'denied', { approved: false, reason: 'superseded' }],
    ['confirm after expiry', earlier, 'confirm', 'expired', 'expired', { approved: false, reason: 'expired' }],
    ['deny after expiry', earlier, 'deny', 'expired', 'expired', { approved: false, reason: 'expired' }],
    ['exactly at expiry', now, 'confirm', 'expired', 'expired', { approved: false, reason: 'expired' }],
  ] as const)('%s', (_name, expiresAt, action, outcome, result, decision) => {
    const r = resolvePendingApproval({ expiresAt, action, now });
    expect(r.outcome).toBe(outcome);
    expect(r.result).toBe(result);
    expect(r.decision).toEqual(decision);
  });
});

describe('hashArgs', () => {
  it('ignores key order and undefined values', () => {
    expect(hashArgs({ a: 1, b: { c: 2, d: [1, 2] } })).toBe(hashArgs({ b: { d: [1, 2], c: 2 }, a: 1, e: undefined }));
  });
  it('differs when a value differs', () => {
    expect(hashArgs({ version: '2.4.1' })).not.toBe(hashArgs({ version: '2.4.2' }));
  });
});

describe('selectApprovals: one decision resolves one approval', () => {
  const now = new Date('2026-12-02T12:00:00Z');
  const live = new Date('2026-12-02T12:05:00Z');
  const gone = new Date('2026-12-02T11:59:00Z');
  const A = { id: 'a', expiresAt: live };
  const B = { id: 'b', expiresAt: live };
  const pick = (s: ReturnType<typeof selectApprovals>) => (s.ok ? s.resolve.map((r) => `${r.id}:${r.resolution.outcome}`) : `${s.code}`);
  it.each([
    ['confirm naming one of two', [A, B], 'confirm', 'b', ['b:approved']],
    ['deny naming one of two', [A, B], 'deny', 'a', ['a:denied']],
    ['bare confirm with exactly one pending', [A], 'confirm', null, ['a:approved']],
    ['bare confirm with two pending', [A, B], 'confirm', null, 'VALIDATION_ERROR'],
    ['naming an approval that is not pending', [A], 'confirm', 'zzz', 'APPROVAL_NOT_FOUND'],
    ['a decision with nothing pending', [], 'confirm', null, 'APPROVAL_NOT_FOUND'],
    ['a new message supersedes every pending one', [A, B], null, null, ['a:denied', 'b:denied']],
    ['past the batch expiry all expire together', [{ id: 'a', expiresAt: gone }, { id: 'b', expiresAt: gone }], 'confirm', 'a', ['a:expired', 'b:expired']],
  ] as const)('%s', (_name, pending, action, approvalId, expected) => {
    expect(pick(selectApprovals({ pending: [...pending], action, approvalId, now }))).toEqual(expected);
  });
  it('names the pending ids when a bare confirm is ambiguous', () => {
    const s = selectApprovals({ pending: [A, B], action: 'confirm', approvalId: null, now });
    expect(s.ok ? '' : s.message).toMatch(/a, b/);
  });
});

describe('resumeDecisions: the whole batch, each bound to its action', () => {
  const deploy = { tool: 'deploy_service', args: { service: 'checkout-api', version: '2.4.1', environment: 'staging' } };
  const bound = (interruptId: string, decision: { approved: true } | { approved: false; reason: 'denied' }, action = deploy, user = 'u1') => ({
    interruptId,
    decision,
    requestedBy: user,
    actionHash: actionHash({ ...action, userId: user }),
  });
  it('waits while one interrupt of the batch is undecided', () => {
    expect(resumeDecisions([{ interruptId: 'i1', ...deploy }, { interruptId: 'i2', ...deploy }], [bound('i1', { approved: true })])).toBeNull();
  });
  it('maps every interrupt to its own decision', () => {
    const decisions = resumeDecisions(
      [{ interruptId: 'i1', ...deploy }, { interruptId: 'i2', ...deploy }],
      [bound('i1', { approved: true }), bound('i2', { approved: false, reason: 'denied' })],
    );
    expect(decisions).toEqual({ i1: { approved: true }, i2: { approved: false, reason: 'denied' } });
  });
  it.each([
    ['other arguments than shown', { ...deploy, args: { ...deploy.args, environment: 'production' } }, 'u1'],
    ['another tool than shown', { ...deploy, tool: 'end_maintenance' }, 'u1'],
    ['approved for another user', deploy, 'u2'],
  ])('refuses an approval whose interrupt shows %s', (_name, paused, approver) => {
    const decided = [{ ...bound('i1', { approved: true }), actionHash: actionHash({ ...deploy, userId: 'u1' }), requestedBy: approver }];
    expect(resumeDecisions([{ interruptId: 'i1', ...paused }], decided)).toEqual({ i1: { approved: false, reason: 'mismatch' } });
  });
  it('an approved decision names its approval and the action hash it bound (issue 41: the backend user JWT); a denial does not', () => {
    const decisions = resumeDecisions(
      [{ interruptId: 'i1', ...deploy }, { interruptId: 'i2', ...deploy }],
      [{ ...bound('i1', { approved: true }), approvalId: 'ap-1' }, { ...bound('i2', { approved: false, reason: 'denied' }), approvalId: 'ap-2' }],
    );
    expect(decisions).toEqual({ i1: { approved: true, approval_id: 'ap-1', action_hash: actionHash({ ...deploy, userId: 'u1' }) }, i2: { approved: false, reason: 'denied' } });
  });
  it('accepts rows from before the binding (no action hash)', () => {
    expect(resumeDecisions([{ interruptId: 'i1', ...deploy }], [{ ...bound('i1', { approved: true }), actionHash: null }])).toEqual({ i1: { approved: true } });
  });
});

describe('decisionOf: a stored resolution as the graph sees it', () => {
  it.each([
    [{ status: 'approved', reason: 'user_confirmed' }, { approved: true }],
    [{ status: 'denied', reason: 'user_denied' }, { approved: false, reason: 'denied' }],
    [{ status: 'denied', reason: 'superseded_by_new_message' }, { approved: false, reason: 'superseded' }],
    [{ status: 'expired', reason: 'approval_timeout' }, { approved: false, reason: 'expired' }],
  ] as const)('%o', (row, decision) => {
    expect(decisionOf(row)).toEqual(decision);
  });
});
