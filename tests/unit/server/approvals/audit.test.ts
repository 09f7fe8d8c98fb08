import { describe, expect, it } from 'vitest';
import { decisionAuditEntry } from '../../../../server/approvals/audit.ts';
import type { Approval } from '../../../../server/db/approvals.ts';

const approval = (status: Approval['status'], reason: string): Approval => ({
  id: 'a1', conversationId: 'c1', threadId: 'c1', interruptId: 'i1', toolCallId: 't1', tool: 'deploy_service', args: {}, argsHash: 'h', actionHash: 'h',
  prompt: 'Deploy?', requestedBy: 'u-req', status, reason, createdAt: new Date(0), expiresAt: new Date(1), resolvedAt: new Date(1), resolvedBy: null, resumedAt: null,
  policy: { scope: 'builtin', action: 'require_approval', matched: false },
  terms: { required: 1, roles: [], users: [], distinctFromRequester: false }, escalate: null, preview: null, labels: {}, replaces: null, decisionNote: null, grantOffer: null, grantRule: null, grantId: null, traceParent: null, stepUp: null, finalArgs: null, finalActionHash: null,
});
const admin = { id: 'u-admin', username: 'admin', role: 'admin' };

describe('decisionAuditEntry', () => {
  const table: Array<[string, Parameters<typeof decisionAuditEntry>[0], Record<string, unknown>]> = [
    ['a /chat confirm (no origin)', { approval: approval('approved', 'user_confirmed'), result: 'confirmed', decider: admin, note: null, origin: undefined },
      { operation: 'approval.approve', method: 'POST', path: '/chat', userId: 'u-admin', username: 'admin', serviceActor: null }],
    ['an API deny on behalf, by a service', { approval: approval('denied', 'not today'), result: 'denied', decider: admin, note: 'not today', origin: { method: 'POST', path: '/api/agent/v1/approvals/a1/deny', serviceActor: 'svc' } },
      { operation: 'approval.deny', path: '/api/agent/v1/approvals/a1/deny', serviceActor: 'svc', username: 'admin' }],
    ['the expiry timer', { approval: approval('expired', 'approval_timeout'), result: 'expired', decider: null, note: null, origin: { method: 'JOB', path: 'approval-expiry' } },
      { operation: 'approval.expire', method: 'JOB', userId: null, username: null, userRole: null, serviceActor: 'system' }],
  ];
  for (const [name, input, expected] of table) {
    it(name, () => {
      const entry = decisionAuditEntry(input);
      expect(entry).toMatchObject({ ...expected, outcome: 'success', toolCallId: 't1', conversationId: 'c1', policyAction: 'require_approval' });
      expect(entry.arguments).toMatchObject({ approval_id: 'a1', tool: 'deploy_service', result: input.result, resolution_reason: input.approval.reason, requested_by: 'u-req', decided_by: input.decider?.id ?? 'system' });
    });
  }
});
