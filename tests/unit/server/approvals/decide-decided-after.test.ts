import { describe, expect, it } from 'vitest';
import { decidedAfter, type ResolvedApproval } from '../../../../server/approvals/decide.ts';
import type { Approval } from '../../../../server/db/approvals.ts';

const row = (id: string, status: Approval['status']): Approval => ({
  id, conversationId: 'c1', threadId: 'c1', interruptId: `i-${id}`, toolCallId: `t-${id}`, tool: 'deploy_service', args: {}, argsHash: 'h', actionHash: 'h',
  prompt: 'Deploy?', requestedBy: 'u', status, reason: status === 'pending' ? null : 'r', createdAt: new Date(0), expiresAt: new Date(1), resolvedAt: null, resolvedBy: null, resumedAt: null,
  policy: { scope: 'builtin', action: 'require_approval', matched: false },
  terms: { required: 1, roles: [], users: [], distinctFromRequester: false }, escalate: null, preview: null, labels: {}, replaces: null, decisionNote: null, grantOffer: null, grantRule: null, grantId: null, traceParent: null, stepUp: null, finalArgs: null, finalActionHash: null,
});
const resolvedAs = (id: string, status: Approval['status']): ResolvedApproval => ({ approvalId: id, result: status === 'approved' ? 'confirmed' : 'denied', reason: status === 'approved' ? 'user_confirmed' : 'user_denied', approval: row(id, status) });

describe('decidedAfter — what a thread is owed right after a decision, without reading again', () => {
  const table: Array<[string, Approval[], ResolvedApproval[], Array<[string, Approval['status']]> | null]> = [
    ['the one pending approval confirmed', [row('a', 'pending')], [resolvedAs('a', 'approved')], [['a', 'approved']]],
    ['a batch: one decided earlier, the last one denied now', [row('a', 'approved'), row('b', 'pending')], [resolvedAs('b', 'denied')], [['a', 'approved'], ['b', 'denied']]],
    ['a new message supersedes two pending', [row('a', 'pending'), row('b', 'pending')], [resolvedAs('a', 'denied'), resolvedAs('b', 'denied')], [['a', 'denied'], ['b', 'denied']]],
    ['one of two confirmed, the other still pending: unknown, read again', [row('a', 'pending'), row('b', 'pending')], [resolvedAs('a', 'approved')], null],
    ['resolved first by a concurrent request (the expiry timer): unknown', [row('a', 'pending')], [], null],
    ['nothing was pending', [row('a', 'denied')], [], [['a', 'denied']]],
  ];
  it.each(table)('%s', (_name, unresumed, resolved, expected) => {
    const after = decidedAfter(unresumed, resolved);
    expect(after === null ? null : after.map((a) => [a.id, a.status])).toEqual(expected);
  });
});
