/** The approvals inbox's pure words (src/lib/approvals/words.ts, issue 26 items 1 and 2). */
import { describe, expect, it } from 'vitest';
import { applyChatEvent, initialView, type ChatEvent, type ChatView } from '../../../../../src/lib/chat/reducer.ts';
import { arrivals, pendingConversations, progressText, riskOf, timeLeft, titleWithCount, type InboxApproval } from '../../../../../src/lib/approvals/words.ts';

const approval = (id: string, session = 'c1'): InboxApproval => ({
  id, status: 'pending', tool_name: 'deploy_service', tool_args: {}, content: 'Deploy?', requested_by: 'demo:admin', resolved_by: null, resolution_reason: null,
  created_at: '2026-12-05T00:00:00Z', expires_at: '2026-12-05T00:05:00Z', resolved_at: null, session_id: session, policy_action: 'require_approval',
  policy_scope: 'builtin', approvals_required: 1, approved_by: [], decisions: [],
});

describe('titleWithCount', () => {
  it('prefixes (N) while some wait, replaces an old prefix, and drops it at zero', () => {
    expect(titleWithCount('Airlock', 1)).toBe('(1) Airlock');
    expect(titleWithCount('(1) Airlock', 3)).toBe('(3) Airlock');
    expect(titleWithCount('(3) Airlock', 0)).toBe('Airlock');
    expect(titleWithCount('(draft) notes', 0)).toBe('(draft) notes');
  });
});

describe('progressText', () => {
  it('says nothing for one approver, then counts with names', () => {
    expect(progressText({ approvals_required: 1, approved_by: [] })).toBe('');
    expect(progressText({ approvals_required: 2, approved_by: [] })).toBe('Needs 2 approvals');
    expect(progressText({ approvals_required: 2, approved_by: ['ann'] })).toBe('1 of 2 approved (by ann)');
    expect(progressText({ approvals_required: 3, approved_by: ['ann', 'bob'] })).toBe('2 of 3 approved (by ann, bob)');
  });
});

describe('timeLeft', () => {
  const at = Date.parse('2026-12-05T00:00:00Z');
  it('counts down in words and says Expired at the end', () => {
    expect(timeLeft('2026-12-05T00:04:05Z', at)).toBe('4 min 05 s left');
    expect(timeLeft('2026-12-05T00:00:12Z', at)).toBe('12 s left');
    expect(timeLeft('2026-12-05T02:03:00Z', at)).toBe('2 h 03 min left');
    expect(timeLeft('2026-12-05T00:00:00Z', at)).toBe('Expired');
  });
});

describe('arrivals and marks', () => {
  it('the first list announces nothing; later only the new ones', () => {
    expect(arrivals(null, [approval('a')])).toEqual([]);
    expect(arrivals(new Set(['a']), [approval('a'), approval('b')]).map((a) => a.id)).toEqual(['b']);
  });
  it('marks each conversation with a pending approval once', () => {
    expect([...pendingConversations([approval('a', 'c1'), approval('b', 'c1'), approval('c', 'c2')])].sort()).toEqual(['c1', 'c2']);
  });
  it('risk from the policy action', () => {
    expect(riskOf({ policy_action: 'require_approval' })).toBe('danger');
    expect(riskOf({ policy_action: 'caution' })).toBe('caution');
  });
});

describe('the chat card under several approvers (reducer, confirm_progress)', () => {
  const reduce = (view: ChatView, metadata: Record<string, unknown>) => applyChatEvent(view, { type: 'message', message: { role: 'assistant', content: '', metadata } } as ChatEvent);
  it('a confirm_required with approvals_required, then confirm_progress: pending, "1 of 2 approved (by admin2)"', () => {
    let view = reduce(initialView(), { type: 'confirm_required', approval_id: 'a1', tool: 'deploy_service', input: { environment: 'production' }, prompt: 'Deploy?', expires_at: '2026-12-05T00:05:00Z', timeout_s: 300, approvals_required: 2 });
    view = reduce(view, { type: 'confirm_progress', approval_id: 'a1', by: 'admin2', approved_count: 1, approvals_required: 2 });
    const card = view.items.find((i) => i.kind === 'approval')!;
    expect(card).toMatchObject({ status: 'pending', approvalsRequired: 2, approvedBy: ['admin2'] });
    expect(view.phase).toBe('awaiting_confirmation');
    expect(progressText({ approvals_required: 2, approved_by: (card as { approvedBy: string[] }).approvedBy })).toBe('1 of 2 approved (by admin2)');
  });
});
