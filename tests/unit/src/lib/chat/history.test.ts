import { progressText } from '../../../../../src/lib/approvals/words.ts';
import { describe, expect, it } from 'vitest';
import { itemsFromHistory } from '../../../../../src/lib/chat/history.ts';
import type { StoredMessage } from '../../../../../src/lib/chat/types.ts';

const m = (id: string, role: 'user' | 'assistant', content: string, metadata: Record<string, unknown> | null): StoredMessage =>
  ({ id, conversation_id: 'c', role, content, metadata, created_at: '2026-01-01T00:00:00Z' }) as StoredMessage;

describe('itemsFromHistory (CONTRACTS §4 stored shapes)', () => {
  it('maps user, tool, approval and answer messages to the live item shapes', () => {
    const items = itemsFromHistory([
      m('1', 'user', 'Deploy it', { files: [{ path: '/f/a.txt', orig_name: 'a.txt' }] }),
      m('2', 'assistant', '', { type: 'tool', tool: 'list_deployments', input: { service: 'x' }, tool_call_id: 't1', status: 'done', output: [1], duration_ms: 8 }),
      m('3', 'assistant', '', { type: 'tool', tool: 'check_health', input: {}, tool_call_id: 't2', status: 'error', error: 'down' }),
      m('4', 'assistant', '', { type: 'approval', approval_id: 'ap', tool: 'deploy_service', input: { v: 1 }, prompt: 'Deploy?', expires_at: '2030-01-01T00:00:00Z', timeout_s: 300, status: 'pending' }),
      m('5', 'assistant', 'Done.', { type: 'answer' }),
    ]);
    expect(items).toEqual([
      { kind: 'user', id: '1', messageId: '1', text: 'Deploy it', files: [{ path: '/f/a.txt', orig_name: 'a.txt' }] },
      { kind: 'tool', id: '2', messageId: '2', callId: 't1', tool: 'list_deployments', input: { service: 'x' }, status: 'done', output: [1], error: undefined, durationMs: 8 },
      { kind: 'tool', id: '3', messageId: '3', callId: 't2', tool: 'check_health', input: {}, status: 'error', output: undefined, error: 'down', durationMs: undefined },
      { kind: 'approval', id: 'ap', messageId: '4', tool: 'deploy_service', input: { v: 1 }, prompt: 'Deploy?', expiresAt: '2030-01-01T00:00:00Z', timeoutS: 300, status: 'pending' },
      { kind: 'answer', id: '5', messageId: '5', text: 'Done.', streaming: false, cancelled: undefined },
    ]);
  });

  it('a stopped answer and an answer that ended in an error', () => {
    expect(itemsFromHistory([
      m('a', 'assistant', 'Partial', { type: 'answer', cancelled: true }),
      m('b', 'assistant', '', { type: 'answer', error: { code: 'LLM_UNAVAILABLE', detail: 'timeout' } }),
    ])).toEqual([
      { kind: 'answer', id: 'a', messageId: 'a', text: 'Partial', streaming: false, cancelled: true },
      { kind: 'error', id: 'b-error', messageId: 'b', code: 'LLM_UNAVAILABLE', detail: 'timeout', retryable: true },
    ]);
  });

  it('each item names its stored message and its seq (issue 29: what Edit and Regenerate send, where a switch goes)', () => {
    const items = itemsFromHistory([{ ...m('u', 'user', 'hi', null), seq: 7 }, { ...m('v', 'assistant', 'Hello', null), seq: 8 }] as StoredMessage[]);
    expect(items.map((i) => [i.id, i.messageId, i.seq])).toEqual([['u', 'u', 7], ['v', 'v', 8]]);
  });

  it('a stored refused tool card is marked refused (issue 29 item 7), a failed one is not', () => {
    expect(itemsFromHistory([
      m('r', 'assistant', '', { type: 'tool', tool: 'deploy_service', input: {}, tool_call_id: 't', status: 'error', error: 'deployments:write', code: 'FORBIDDEN' }),
      m('f', 'assistant', '', { type: 'tool', tool: 'check_health', input: {}, tool_call_id: 'u', status: 'error', error: 'down', code: 'TOOL_FAILURE' }),
    ]).map((i) => (i.kind === 'tool' ? i.refused : null))).toEqual([true, undefined]);
  });

  it('tolerates null metadata and unknown statuses', () => {
    expect(itemsFromHistory([m('x', 'assistant', 'Hi', null), m('y', 'assistant', '', { type: 'approval', status: 'weird' })])).toMatchObject([
      { kind: 'answer', text: 'Hi' },
      { kind: 'approval', id: 'y', status: 'pending' },
    ]);
  });

  it('a partly approved M-of-N card reloads as the live one shows it: 1 of 2, by whom (issue 26)', () => {
    const [card] = itemsFromHistory([m('z', 'assistant', '', { type: 'approval', approval_id: 'ap2', tool: 'deploy_service', status: 'pending', approvals_required: 2, approved_by: ['admin2'] })]);
    expect(card).toMatchObject({ kind: 'approval', approvalsRequired: 2, approvedBy: ['admin2'] });
    expect(progressText({ approvals_required: 2, approved_by: (card as { approvedBy: string[] }).approvedBy })).toBe('1 of 2 approved (by admin2)');
  });

  it('a stored card decided with changes reads who decided and what was proposed and ran (issue 37 item 3)', () => {
    const [card] = itemsFromHistory([m('d', 'assistant', '', { type: 'approval', approval_id: 'ap3', tool: 'deploy_service', status: 'confirmed', reason: 'user_confirmed', decided_by: 'admin', edited: { original_args: { environment: 'staging' }, args: { environment: 'moon' } } })]);
    expect(card).toMatchObject({ kind: 'approval', status: 'confirmed', decidedBy: 'admin', edited: { from: { environment: 'staging' }, to: { environment: 'moon' } } });
    const [plain] = itemsFromHistory([m('e', 'assistant', '', { type: 'approval', approval_id: 'ap4', tool: 'x', status: 'expired', edited: { args: 'no' } })]);
    expect(plain).not.toHaveProperty('edited');
    expect(plain).not.toHaveProperty('decidedBy');
  });
});
