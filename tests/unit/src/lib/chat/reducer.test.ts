import { describe, expect, it } from 'vitest';
import { applyChatEvent, initialView, type ChatEvent, type ChatView } from '../../../../../src/lib/chat/reducer.ts';
import type { WireChatMessage } from '../../../../../src/lib/chat/types.ts';
import { wire } from './fakes.ts';

const run = (...events: ChatEvent[]): ChatView => events.reduce(applyChatEvent, initialView());
/** A /chat message, loose: some tests send what the gateway would not (no metadata, null content). */
const msg = (message: object): ChatEvent => ({ type: 'message', message: message as WireChatMessage });
const submitted: ChatEvent = { type: 'submitted', text: 'hello' };
const future = new Date(Date.now() + 60_000).toISOString();
const pendingCard = { kind: 'approval' as const, id: 'a', tool: 'deploy_service', input: {}, prompt: '', expiresAt: future, timeoutS: 300, status: 'pending' as const };

describe('applyChatEvent', () => {
  const table: { name: string; events: ChatEvent[]; expect: (v: ChatView) => void }[] = [
    {
      name: 'submit adds the user message and starts streaming',
      events: [submitted],
      expect: (v) => {
        expect(v.phase).toBe('streaming');
        expect(v.items).toEqual([{ kind: 'user', id: 'user-1', text: 'hello', files: [] }]);
      },
    },
    {
      name: 'stream_token creates one answer and grows it from content',
      events: [submitted, msg(wire.token('Hel', 'Hel')), msg(wire.token('Hello', 'lo')), msg(wire.token('Hello world', ' world'))],
      expect: (v) => {
        const answers = v.items.filter((i) => i.kind === 'answer');
        expect(answers).toHaveLength(1);
        expect(answers[0]).toMatchObject({ text: 'Hello world', streaming: true });
        expect(v.announcement).toBe('');
      },
    },
    {
      name: 'the completion repeats the last frame without duplicating text',
      events: [submitted, msg(wire.token('Hi there', 'there')), msg(wire.token('Hi there', 'there')), { type: 'ended', reason: 'complete' }],
      expect: (v) => {
        expect(v.items[1]).toMatchObject({ kind: 'answer', text: 'Hi there', streaming: false });
        expect(v.phase).toBe('idle');
        expect(v.announcement).toBe('Answer complete.');
      },
    },
    {
      name: 'tokens without string content are appended',
      events: [submitted, msg({ role: 'assistant', content: null, metadata: { type: 'stream_token', token: 'a' } }), msg({ role: 'assistant', content: null, metadata: { type: 'stream_token', token: 'b' } })],
      expect: (v) => expect(v.items[1]).toMatchObject({ kind: 'answer', text: 'ab' }),
    },
    {
      name: 'tool_start shows a running card; tool_end turns it done with duration and output',
      events: [submitted, msg(wire.toolStart('call-1', 'search_dashboards', { q: 'latency' })), msg(wire.toolEnd('call-1', 'search_dashboards', { items: [1] }, 42))],
      expect: (v) => {
        expect(v.items[1]).toEqual({ kind: 'tool', id: 'call-1', tool: 'search_dashboards', input: { q: 'latency' }, status: 'done', output: { items: [1] }, durationMs: 42 });
      },
    },
    {
      name: 'a repeated tool_start does not turn a finished card back to running',
      events: [submitted, msg(wire.toolStart('c', 't', {})), msg(wire.toolEnd('c', 't', 1)), msg(wire.toolStart('c', 't', {}))],
      expect: (v) => expect(v.items[1]).toMatchObject({ status: 'done' }),
    },
    {
      name: 'tool_error turns the card into a cross with the detail',
      events: [submitted, msg(wire.toolStart('c', 'check_health', {})), msg(wire.toolError('c', 'check_health', 'backend down'))],
      expect: (v) => expect(v.items[1]).toMatchObject({ kind: 'tool', status: 'error', error: 'backend down', input: {} }),
    },
    {
      name: 'a card after text closes that answer segment; later text starts a new bubble below it (as the transcript stores it)',
      events: [
        submitted, msg(wire.token('Looking.', 'Looking.')),
        msg({ ...wire.toolStart('c', 't', {}), content: 'Looking.' }), msg({ ...wire.toolEnd('c', 't', 1), content: 'Looking.' }),
        msg(wire.token('Looking. Found', ' Found')), msg(wire.token('Looking. Found it.', ' it.')),
      ],
      expect: (v) => {
        expect(v.items.map((i) => i.kind)).toEqual(['user', 'answer', 'tool', 'answer']);
        expect(v.items[1]).toMatchObject({ text: 'Looking.', streaming: false });
        expect(v.items[3]).toMatchObject({ text: ' Found it.', streaming: true });
      },
    },
    {
      name: 'confirm_required adds a pending approval, announces it, and the end waits for confirmation',
      events: [submitted, msg(wire.confirm('ap-1', 'deploy_service', { service: 'checkout-api' }, future)), { type: 'ended', reason: 'complete' }],
      expect: (v) => {
        expect(v.items[1]).toMatchObject({ kind: 'approval', id: 'ap-1', tool: 'deploy_service', status: 'pending', expiresAt: future, timeoutS: 300 });
        expect(v.phase).toBe('awaiting_confirmation');
        expect(v.announcement).toBe('Approval needed: Run deploy_service?');
      },
    },
    {
      name: 'a paused message whose content carries the plain-text approval note (issue 13) leaves the answer text as streamed',
      events: [
        submitted, msg(wire.token('Checking.', 'Checking.')),
        msg({ ...wire.confirm('ap-1', 'deploy_service', {}, future), content: 'Checking.\n\nApproval needed: Run deploy_service? To go ahead, call /chat again…' }),
        { type: 'ended', reason: 'complete' },
      ],
      expect: (v) => {
        expect(v.items.map((i) => i.kind)).toEqual(['user', 'answer', 'approval']);
        expect(v.items[1]).toMatchObject({ text: 'Checking.', streaming: false });
      },
    },
    {
      name: 'confirm submit marks the card deciding without a user bubble; confirm_resolved collapses it',
      events: [
        submitted, msg(wire.confirm('ap-1', 'deploy_service', {}, future)), { type: 'ended', reason: 'complete' },
        { type: 'submitted', text: 'confirm', action: 'confirm', approvalId: 'ap-1' },
      ],
      expect: (v) => {
        expect(v.items.filter((i) => i.kind === 'user')).toHaveLength(1);
        expect(v.items[1]).toMatchObject({ status: 'pending', deciding: 'confirm' });
        const next = applyChatEvent(v, msg(wire.resolved('ap-1', 'confirmed')));
        expect(next.items[1]).toMatchObject({ status: 'confirmed', deciding: undefined });
        expect(next.phase).toBe('streaming');
        expect(next.announcement).toBe('Action confirmed.');
      },
    },
    {
      name: 'the resumed answer after a confirmation is a new bubble below the card',
      events: [
        submitted, msg(wire.confirm('ap-1', 'deploy_service', {}, future)), { type: 'ended', reason: 'complete' },
        { type: 'submitted', text: 'confirm', action: 'confirm', approvalId: 'ap-1' }, msg(wire.resolved('ap-1', 'confirmed')),
        msg(wire.toolStart('c2', 'deploy_service', {})), msg(wire.toolEnd('c2', 'deploy_service', { ok: true })), msg(wire.token('Deployed.', 'Deployed.')),
        { type: 'ended', reason: 'complete' },
      ],
      expect: (v) => {
        expect(v.items.map((i) => i.kind)).toEqual(['user', 'approval', 'tool', 'answer']);
        expect(v.phase).toBe('idle');
      },
    },
    {
      name: 'deny collapses the card to denied',
      events: [submitted, msg(wire.confirm('ap-1', 'start_maintenance', {}, future)), msg(wire.resolved('ap-1', 'denied'))],
      expect: (v) => expect(v.items[1]).toMatchObject({ status: 'denied' }),
    },
    {
      name: 'a tick past expires_at marks the approval expired and frees the composer',
      events: [submitted, msg(wire.confirm('ap-1', 'deploy_service', {}, '2020-01-01T00:00:00Z')), { type: 'ended', reason: 'complete' }, { type: 'tick', now: Date.now() }],
      expect: (v) => {
        expect(v.items[1]).toMatchObject({ status: 'expired' });
        expect(v.phase).toBe('idle');
        expect(v.announcement).toBe('The approval request expired.');
      },
    },
    {
      name: 'confirm_resolved expired from the server',
      events: [submitted, msg(wire.confirm('ap-1', 'deploy_service', {}, future)), msg(wire.resolved('ap-1', 'expired'))],
      expect: (v) => expect(v.items[1]).toMatchObject({ status: 'expired' }),
    },
    {
      name: 'an error event adds an error card with the taxonomy retryability',
      events: [submitted, msg(wire.error('LLM_UNAVAILABLE', 'model down')), { type: 'ended', reason: 'complete' }],
      expect: (v) => {
        expect(v.items[1]).toMatchObject({ kind: 'error', code: 'LLM_UNAVAILABLE', detail: 'model down', retryable: true });
        expect(v.announcement).toMatch(/language model is unavailable/);
        expect(v.phase).toBe('idle');
      },
    },
    {
      name: 'FORBIDDEN is not retryable; unknown codes read as INTERNAL',
      events: [submitted, msg(wire.error('FORBIDDEN', 'deployments:write')), msg(wire.error('WHAT', 'x'))],
      expect: (v) => {
        expect(v.items[1]).toMatchObject({ code: 'FORBIDDEN', retryable: false });
        expect(v.items[2]).toMatchObject({ code: 'INTERNAL', retryable: true });
      },
    },
    {
      name: 'a refused tool shows once: its card says not allowed, the step error adds no card, the sentence follows',
      events: [
        submitted, msg(wire.toolStart('c', 'deploy_service', {})),
        msg({ ...wire.toolError('c', 'deploy_service', 'deployments:write'), metadata: { type: 'tool_error', tool: 'deploy_service', error: 'deployments:write', tool_call_id: 'c', code: 'FORBIDDEN' } }),
        msg({ ...wire.error('FORBIDDEN', 'deployments:write'), metadata: { type: 'error', code: 'FORBIDDEN', detail: 'deployments:write', retryable: false, tool_call_id: 'c' } }),
        msg(wire.token('Your role cannot deploy.', 'Your role cannot deploy.')), { type: 'ended', reason: 'complete' },
      ],
      expect: (v) => {
        expect(v.items.map((i) => i.kind)).toEqual(['user', 'tool', 'answer']);
        expect(v.items[1]).toMatchObject({ kind: 'tool', status: 'error', refused: true });
        expect(v.announcement).toBe('Answer complete.');
      },
    },
    {
      name: 'a step error whose tool card is not on the page still gets its own card',
      events: [submitted, msg({ ...wire.error('FORBIDDEN', 'x'), metadata: { type: 'error', code: 'FORBIDDEN', detail: 'x', retryable: false, tool_call_id: 'gone' } })],
      expect: (v) => expect(v.items[1]).toMatchObject({ kind: 'error', code: 'FORBIDDEN' }),
    },
    {
      name: 'a repeated error frame is shown once',
      events: [submitted, msg(wire.error('TOOL_FAILURE', 'x')), msg(wire.error('TOOL_FAILURE', 'x'))],
      expect: (v) => expect(v.items.filter((i) => i.kind === 'error')).toHaveLength(1),
    },
    {
      name: 'APPROVAL_EXPIRED marks the pending card expired',
      events: [submitted, msg(wire.confirm('ap', 'deploy_service', {}, future)), { type: 'submitted', text: 'confirm', action: 'confirm', approvalId: 'ap' }, msg(wire.error('APPROVAL_EXPIRED'))],
      expect: (v) => expect(v.items[1]).toMatchObject({ status: 'expired', deciding: undefined }),
    },
    {
      name: 'Stop keeps the partial answer, marked stopped',
      events: [submitted, msg(wire.token('Partial', 'Partial')), { type: 'ended', reason: 'cancelled' }],
      expect: (v) => {
        expect(v.items[1]).toMatchObject({ text: 'Partial', streaming: false, cancelled: true });
        expect(v.announcement).toBe('Answer stopped.');
        expect(v.phase).toBe('idle');
      },
    },
    {
      name: 'a transport failure ends the run with an error card',
      events: [submitted, msg(wire.token('a', 'a')), { type: 'failed', code: 'GRADIO_UNREACHABLE', detail: 'Connection errored out.' }],
      expect: (v) => {
        expect(v.phase).toBe('idle');
        expect(v.items[1]).toMatchObject({ streaming: false });
        expect(v.items[2]).toMatchObject({ kind: 'error', code: 'GRADIO_UNREACHABLE', retryable: true });
      },
    },
    {
      name: 'a retry does not repeat the user bubble',
      events: [submitted, { type: 'failed', code: 'LLM_UNAVAILABLE' }, { type: 'dismiss', id: 'error-1-1' }, { type: 'submitted', text: 'hello', retry: true }],
      expect: (v) => expect(v.items.map((i) => i.kind)).toEqual(['user']),
    },
    {
      name: 'loaded history with a pending approval waits for confirmation; prepend keeps the rest',
      events: [
        { type: 'loaded', items: [{ kind: 'approval', id: 'a', tool: 't', input: {}, prompt: '', expiresAt: future, timeoutS: 300, status: 'pending' }] },
        { type: 'loaded', prepend: true, items: [{ kind: 'user', id: 'u0', text: 'older', files: [] }] },
      ],
      expect: (v) => {
        expect(v.items.map((i) => i.id)).toEqual(['u0', 'a']);
        expect(v.phase).toBe('awaiting_confirmation');
      },
    },
    {
      name: 'the attachments report replaces the sent files with what the assistant got of them',
      events: [
        { type: 'submitted', text: 'look', files: [{ path: 'h/pic.png', orig_name: 'pic.png' }] },
        msg({ role: 'assistant', content: '', metadata: { type: 'attachments', files: [{ path: 'h/pic.png', orig_name: 'pic.png', size: 68, status: 'not_seen', note: 'The assistant cannot see images with the current model.' }] } }),
        msg(wire.token('I', 'I')),
      ],
      expect: (v) => {
        expect(v.items[0]).toEqual({
          kind: 'user', id: 'user-1', text: 'look',
          files: [{ path: 'h/pic.png', orig_name: 'pic.png', size: 68, status: 'not_seen', note: 'The assistant cannot see images with the current model.' }],
        });
        expect(v.items[1]).toMatchObject({ kind: 'answer', text: 'I' });
      },
    },
    {
      name: 'a message sent while a card waits marks it as being decided by that message; denied, it reads as superseded',
      events: [
        { type: 'loaded', items: [pendingCard] },
        submitted,
        msg(wire.resolved('a', 'denied')),
      ],
      expect: (v) => expect(v.items[0]).toMatchObject({ kind: 'approval', status: 'denied', reason: 'superseded_by_new_message', deciding: undefined }),
    },
    {
      name: 'the reason the server gives wins; a Deny pressed here is no supersede',
      events: [
        { type: 'loaded', items: [pendingCard] },
        { type: 'submitted', text: 'deny', action: 'deny', approvalId: 'a' },
        msg({ role: 'assistant', content: '', metadata: { type: 'confirm_resolved', result: 'denied', approval_id: 'a', reason: 'user_denied' } }),
      ],
      expect: (v) => expect(v.items[0]).toMatchObject({ status: 'denied', reason: 'user_denied' }),
    },
    {
      name: 'confirmed with changes: the card keeps who decided and what was proposed and ran (issue 37 item 3)',
      events: [
        { type: 'loaded', items: [pendingCard] },
        { type: 'submitted', text: '', action: 'confirm', approvalId: 'a' },
        msg({ role: 'assistant', content: '', metadata: { type: 'confirm_resolved', result: 'confirmed', approval_id: 'a', reason: 'user_confirmed', by: 'admin', edited: { original_args: { environment: 'staging' }, args: { environment: 'moon' }, patch: [{ op: 'replace', path: '/environment', value: 'moon' }] } } }),
      ],
      expect: (v) => expect(v.items[0]).toMatchObject({ status: 'confirmed', decidedBy: 'admin', edited: { from: { environment: 'staging' }, to: { environment: 'moon' } } }),
    },
    {
      name: "edited arguments the server refused go on the card being confirmed (no error card); the next confirm clears them",
      events: [
        { type: 'loaded', items: [pendingCard] },
        { type: 'submitted', text: '', action: 'confirm', approvalId: 'a' },
        msg({ ...wire.error('VALIDATION_ERROR', 'The edited arguments do not fit deploy_service: version: too small'), metadata: { ...wire.error('VALIDATION_ERROR').metadata, fields: [{ path: 'version', message: 'too small' }] } }),
        { type: 'ended', reason: 'error' },
      ],
      expect: (v) => {
        expect(v.items).toHaveLength(1);
        expect(v.items[0]).toMatchObject({ status: 'pending', deciding: undefined, fieldErrors: [{ path: 'version', message: 'too small' }] });
        const again = applyChatEvent(v, { type: 'submitted', text: '', action: 'confirm', approvalId: 'a' });
        expect(again.items[0]).toMatchObject({ deciding: 'confirm', fieldErrors: undefined });
      },
    },
    {
      name: 'a VALIDATION_ERROR with fields but no card being confirmed is an error card as any other',
      events: [submitted, msg({ role: 'assistant', content: '', metadata: { type: 'error', code: 'VALIDATION_ERROR', detail: 'bad', retryable: false, fields: [{ path: 'x', message: 'bad' }] } })],
      expect: (v) => expect(v.items[1]).toMatchObject({ kind: 'error', code: 'VALIDATION_ERROR' }),
    },
    {
      name: 'a decision made elsewhere, without a reason, stays a plain denial',
      events: [{ type: 'loaded', items: [pendingCard] }, msg(wire.resolved('a', 'denied'))],
      expect: (v) => expect(v.items[0]).not.toHaveProperty('reason'),
    },
    {
      name: 'following a run found open: the stored answer it still writes continues in place, streaming',
      events: [
        { type: 'loaded', items: [{ kind: 'user', id: 'u', text: 'hi', files: [] }, { kind: 'answer', id: 'm2', text: 'Hel', streaming: false }] },
        { type: 'following', answerId: 'm2' },
        msg(wire.token('Hello', 'Hello')),
      ],
      expect: (v) => {
        expect(v.phase).toBe('streaming');
        expect(v.items).toEqual([{ kind: 'user', id: 'u', text: 'hi', files: [] }, { kind: 'answer', id: 'm2', text: 'Hello', streaming: true }]);
      },
    },
    {
      name: "a followed run's tool result updates the stored card of that call (no second card)",
      events: [
        { type: 'loaded', items: [{ kind: 'tool', id: 'm3', callId: 'call-1', tool: 'check_health', input: {}, status: 'running' }] },
        { type: 'following', answerId: null },
        msg(wire.toolEnd('call-1', 'check_health', { ok: true }, 9)),
      ],
      expect: (v) => expect(v.items).toEqual([{ kind: 'tool', id: 'm3', callId: 'call-1', tool: 'check_health', input: {}, status: 'done', output: { ok: true }, durationMs: 9 }]),
    },
    {
      name: 'a transport failure keeps its library message for the details, not the sentence',
      events: [submitted, { type: 'failed', code: 'GRADIO_UNREACHABLE', detail: 'Connection errored out.' }],
      expect: (v) => expect(v.items[1]).toMatchObject({ kind: 'error', detail: '', diagnostic: 'Connection errored out.' }),
    },
    {
      name: 'unknown metadata types are ignored; plain content is answer text',
      events: [submitted, msg({ role: 'assistant', content: 'x', metadata: { type: 'something_new' } }), msg({ role: 'assistant', content: 'Plain text' })],
      expect: (v) => expect(v.items.slice(1)).toMatchObject([{ kind: 'answer', text: 'Plain text' }]),
    },
  ];

  for (const row of table) it(row.name, () => row.expect(run(...row.events)));

  it('never mutates the view it is given', () => {
    const before = run(submitted, msg(wire.token('a', 'a')));
    const frozen = structuredClone(before);
    applyChatEvent(before, msg(wire.token('ab', 'b')));
    applyChatEvent(before, { type: 'ended', reason: 'complete' });
    expect(before).toEqual(frozen);
  });
});
