/** Each ledger kind and branch of the projection, one at a time (the gateway's and the UI's: one class). */
import { describe, expect, it } from 'vitest';
import type { LiveEvent } from '../../../../../server/engine/index.ts';
import { ChatProjection } from '../../../../../src/lib/wire/index.ts';
import { CONVERSATION as C, committed, partial } from './ledger-fixture.ts';

function play(events: LiveEvent[]) {
  const view = new ChatProjection();
  const out = events.flatMap((e) => view.apply(e, C).map((m) => ({ ...m, content: view.content })));
  return { out, content: view.content };
}

describe('ChatProjection', () => {
  it('live: partials stream, the committed answer adds nothing twice', () => {
    const { out, content } = play([committed('user.message', { request_id: 'r', text: 'hi', files: [] }), partial('Hel'), partial('lo'), committed('assistant.message', { text: 'Hello' })]);
    expect(out.map((m) => m.type)).toEqual(['stream_token', 'stream_token']);
    expect(content).toBe('Hello');
  });

  it('replayed from the ledger: the whole answer arrives as one token', () => {
    const { out, content } = play([committed('assistant.message', { text: 'Hello' })]);
    expect(out).toEqual([{ type: 'stream_token', token: 'Hello', content: 'Hello' }]);
    expect(content).toBe('Hello');
  });

  it('attach mid-answer: a snapshot partial, then the rest of the committed text', () => {
    const { out, content } = play([partial('Hello wor'), committed('assistant.message', { text: 'Hello world' })]);
    expect(out.map((m) => (m as { token?: string }).token)).toEqual(['Hello wor', 'ld']);
    expect(content).toBe('Hello world');
  });

  const cases: Array<[string, LiveEvent, unknown[]]> = [
    ['tool.call', committed('tool.call', { tool_call_id: 't1', tool: 'check_health', input: { service: 'a' } }), [{ type: 'tool_start', tool: 'check_health', input: { service: 'a' }, tool_call_id: 't1' }]],
    ['tool.result done', committed('tool.result', { tool_call_id: 't1', tool: 'x', status: 'done', output: { ok: 1 }, duration_ms: 7 }), [{ type: 'tool_end', tool: 'x', output: { ok: 1 }, tool_call_id: 't1', duration_ms: 7 }]],
    ['tool.result error', committed('tool.result', { tool_call_id: 't1', tool: 'x', status: 'error', error: 'boom', code: 'TOOL_FAILURE' }), [{ type: 'tool_error', tool: 'x', error: 'boom', tool_call_id: 't1', code: 'TOOL_FAILURE' }]],
    [
      'tool.result FORBIDDEN also says error, as the step of its tool_call_id',
      committed('tool.result', { tool_call_id: 't1', tool: 'x', status: 'error', error: 'no', code: 'FORBIDDEN' }),
      [{ type: 'tool_error', tool: 'x', error: 'no', tool_call_id: 't1', code: 'FORBIDDEN' }, { type: 'error', code: 'FORBIDDEN', detail: 'no', retryable: false, tool_call_id: 't1' }],
    ],
    ['approval.resolved', committed('approval.resolved', { approval_id: 'a1', result: 'denied' }), [{ type: 'confirm_resolved', result: 'denied', approval_id: 'a1' }]],
    ['run.finished done', committed('run.finished', { status: 'done', turns: 1, duration_ms: 1, stop_reason: 'end_turn', error_code: null }), []],
    ['run.finished cancelled', committed('run.finished', { status: 'cancelled', turns: 1, duration_ms: 1, stop_reason: 'cancelled', error_code: null }), []],
    [
      'run.finished failed',
      committed('run.finished', { status: 'failed', turns: 0, duration_ms: 1, stop_reason: 'error', error_code: 'LLM_UNAVAILABLE', error_detail: 'down' }),
      [{ type: 'error', code: 'LLM_UNAVAILABLE', detail: 'down', retryable: true }],
    ],
    [
      'run.finished with an unknown code is INTERNAL',
      committed('run.finished', { status: 'failed', turns: 0, duration_ms: 1, stop_reason: 'process_exit', error_code: 'WHAT' }),
      [{ type: 'error', code: 'INTERNAL', detail: 'Something went wrong on our side.', retryable: true }],
    ],
  ];
  it.each(cases)('%s', (_name, event, expected) => {
    expect(new ChatProjection().apply(event, C)).toEqual(expected);
  });

  it('approval.requested becomes confirm_required with the conversation as thread', () => {
    const event = committed('approval.requested', { approval_id: 'a1', tool: 'deploy_service', input: { v: 1 }, prompt: 'Deploy?', expires_at: '2026-01-01T00:05:00Z', timeout_s: 300 });
    expect(new ChatProjection().apply(event, C)).toEqual([
      // An event stored before issue 27: no preview is "no preview", no labels, and not grantable.
      { type: 'confirm_required', prompt: 'Deploy?', thread_id: C, approval_id: 'a1', tool: 'deploy_service', input: { v: 1 }, expires_at: '2026-01-01T00:05:00Z', timeout_s: 300, preview: null, labels: {}, grantable: null },
    ]);
  });

  it('confirm_required carries the preview, the labels and what it replaces (issue 27)', () => {
    const preview = { summary: 'checkout-api staging: 2.4.0 → 2.4.1', state_hash: 'h' };
    const replaces = { approval_id: '00000000-0000-4000-8000-000000000001', reason: 'state_changed' as const };
    const event = committed('approval.requested', { approval_id: 'a2', tool: 'deploy_service', input: { service: 'checkout-api' }, prompt: 'Deploy?', expires_at: '2026-01-01T00:05:00Z', timeout_s: 300, preview, labels: { service: 'Service' }, replaces });
    expect(new ChatProjection().apply(event, C)[0]).toMatchObject({ type: 'confirm_required', approval_id: 'a2', preview, labels: { service: 'Service' }, replaces });
  });

  it('partial_snapshot (the segment so far on attaching; the UI after a drain) adds only its unseen rest', () => {
    const view = new ChatProjection();
    const snapshot = (token: string) => ({ kind: 'partial_snapshot' as const, payload: { token } });
    expect(view.apply(snapshot('Hello '), C)).toEqual([{ type: 'stream_token', token: 'Hello ' }]);
    expect(view.apply(snapshot('Hello wor'), C)).toEqual([{ type: 'stream_token', token: 'wor' }]);
    expect(view.apply(snapshot('Hello'), C)).toEqual([]); // nothing unseen
    expect(view.apply(partial('ld'), C)).toEqual([{ type: 'stream_token', token: 'ld' }]);
    expect(view.content).toBe('Hello world');
  });

  it('shows a kind it does not know as nothing (a newer server, a drain frame)', () => {
    expect(new ChatProjection().apply({ kind: 'drain', payload: {} } as never, C)).toEqual([]);
  });
});
