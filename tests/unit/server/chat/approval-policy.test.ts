import { describe, expect, it } from 'vitest';
import { approvalPrompt, hashArgs, resolvePendingApproval } from '../../../../server/chat/approval-policy.ts';

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

describe('approvalPrompt', () => {
  it.each([
    ['deploy_service', { service: 'checkout-api', version: '2.4.1', environment: 'staging' }, 'Deploy checkout-api version 2.4.1 to staging?'],
    ['start_maintenance', { service: 'db-primary', duration_minutes: 30, reason: 'disk upgrade' }, 'Start maintenance on db-primary for 30 minutes (reason: disk upgrade)?'],
    ['end_maintenance', { service: 'db-primary' }, 'End the active maintenance on db-primary?'],
    ['restart_pod', { name: 'web-1', force: true }, 'Run restart_pod with name=web-1, force=true?'],
  ])('%s', (tool, args, prompt) => {
    expect(approvalPrompt(tool, args)).toBe(prompt);
  });
});
