/**
 * The AG-UI projection and snapshot, from tables; every stream they make is checked with AG-UI's
 * own event schemas and the reference client's sequence verifier (@ag-ui/client verifyEvents).
 */
import { verifyEvents } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { EventSchemas } from '@ag-ui/core/schemas';
import { from, lastValueFrom, toArray } from 'rxjs';
import { beforeEach, describe, expect, it } from 'vitest';
import { AgUiProjection, type Frame } from '../../../../server/ag-ui/projection.ts';
import { threadMessages } from '../../../../server/ag-ui/snapshot.ts';
import type { LedgerEvent, LiveEvent } from '../../../../server/engine/index.ts';

const RUN = '0b6f2c1e-8a6e-4f4e-9d1c-2a3b4c5d6e7f';
const APPROVAL = '5e0c8a54-3c1f-4a7e-9b2d-1f2e3d4c5b6a';
let seq = 0;
// Each test's events are built before play() resets seq: start every test at 0, whatever ran before.
beforeEach(() => {
  seq = 0;
});
const committed = (kind: string, payload: Record<string, unknown>, run = RUN): LedgerEvent =>
  ({ kind, payload: { run_id: run, ...payload }, seq: ++seq, conversation_id: 'c', run_id: run, created_at: '2026-01-01T00:00:00Z' }) as LedgerEvent;
const partial = (token: string): LiveEvent => ({ kind: 'partial', payload: { run_id: RUN, token } });
const finished = (status: string, extra: Record<string, unknown> = {}) =>
  committed('run.finished', { status, turns: 1, duration_ms: 5, stop_reason: 'x', error_code: null, ...extra });
const requested = () =>
  committed('approval.requested', { approval_id: APPROVAL, tool_call_id: 'call-9', tool: 'deploy_service', input: { service: 's', version: '1' }, prompt: 'Deploy s 1?', expires_at: '2026-01-01T00:05:00.000Z', timeout_s: 300 });

function play(events: LiveEvent[]): Frame[] {
  seq = 0;
  const view = new AgUiProjection({ threadId: 'thread', runId: 'ag-run', engineRunId: RUN });
  return [view.runStarted(), ...events.flatMap((e) => view.apply(e))];
}

/** The frames' events, each valid by AG-UI's schema, the sequence accepted by the reference verifier. */
async function verified(frames: Frame[]): Promise<BaseEvent[]> {
  const events = frames.flatMap((f) => (f.event ? [f.event] : []));
  for (const e of events) expect(EventSchemas.safeParse(e).success, JSON.stringify(e)).toBe(true);
  return lastValueFrom(from(events).pipe(verifyEvents(false), toArray()));
}
const typesOf = (frames: Frame[]) => frames.flatMap((f) => (f.event ? [f.event.type] : []));

describe('AgUiProjection', () => {
  const user = () => committed('user.message', { request_id: 'r', text: 'hi', files: [] });

  const table: Array<[string, () => LiveEvent[], string[], Record<string, unknown>]> = [
    ['a streamed answer', () => [user(), partial('Hel'), partial('lo'), committed('assistant.message', { text: 'Hello' }), finished('done')],
      ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED'], { outcome: { type: 'success' } }],
    ['an answer replayed from the ledger comes whole', () => [user(), committed('assistant.message', { text: 'Hello' }), finished('done')],
      ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED'], { outcome: { type: 'success' } }],
    ['a tool round', () => [user(), partial('Checking'), committed('assistant.message', { text: 'Checking' }), committed('tool.call', { tool_call_id: 't1', tool: 'check_health', input: { service: 'a' } }), committed('tool.result', { tool_call_id: 't1', tool: 'check_health', status: 'done', output: { ok: 1 }, duration_ms: 3 }), finished('done')],
      ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT', 'RUN_FINISHED'], { outcome: { type: 'success' } }],
    ['a pause for approval', () => [user(), requested(), finished('paused')],
      ['RUN_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'RUN_FINISHED'],
      { outcome: { type: 'interrupt', interrupts: [{ id: APPROVAL, reason: 'tool_approval', message: 'Deploy s 1?', toolCallId: 'call-9', expiresAt: '2026-01-01T00:05:00.000Z' }] } }],
    ['a failure keeps the text and ends with our code', () => [user(), partial('Par'), committed('assistant.message', { text: 'Partial', error: { code: 'LLM_UNAVAILABLE', detail: 'down' } }), finished('failed', { error_code: 'LLM_UNAVAILABLE', error_detail: 'down' })],
      ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_ERROR'], { code: 'LLM_UNAVAILABLE', message: 'down' }],
    ['an unknown code is INTERNAL', () => [finished('failed', { error_code: 'WHAT', error_detail: 'x' })], ['RUN_STARTED', 'RUN_ERROR'], { code: 'INTERNAL' }],
    ['a cancel', () => [user(), partial('a'), committed('assistant.message', { text: 'a', cancelled: true }), finished('cancelled')],
      ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED'], { outcome: { type: 'cancelled' } }],
    ['a confirm that leaves others pending, with none added, cannot be an empty interrupt', () => [committed('approval.resolved', { approval_id: APPROVAL, result: 'confirmed' }), finished('paused')],
      ['RUN_STARTED', 'RUN_ERROR'], { code: 'INTERNAL' }],
  ];

  it.each(table)('%s', async (_name, events, types, last) => {
    const frames = play(events());
    expect(typesOf(frames)).toEqual(types);
    expect(frames.at(-1)!.event).toMatchObject(last);
    await expect(verified(frames)).resolves.toHaveLength(types.length);
  });

  it('each commit gives its seq to the last frame of its group; commits with nothing to show are id-only frames', () => {
    const frames = play([user(), partial('Hi'), committed('assistant.message', { text: 'Hi' }), committed('tool.call', { tool_call_id: 't', tool: 'x', input: {} }), finished('done')]);
    expect(frames.map((f) => [f.event?.type ?? null, f.id ?? null])).toEqual([
      ['RUN_STARTED', null],
      [null, 1],
      ['TEXT_MESSAGE_START', null],
      ['TEXT_MESSAGE_CONTENT', null],
      ['TEXT_MESSAGE_END', 2],
      ['TOOL_CALL_START', null],
      ['TOOL_CALL_ARGS', null],
      ['TOOL_CALL_END', 3],
      ['RUN_FINISHED', 4],
    ]);
  });

  it('the text is whole: partials, then the committed rest, never twice', () => {
    const frames = play([user(), partial('Hello wor'), committed('assistant.message', { text: 'Hello world' })]);
    expect(frames.flatMap((f) => (f.event?.type === 'TEXT_MESSAGE_CONTENT' ? [f.event.delta] : []))).toEqual(['Hello wor', 'ld']);
  });

  it('a resume whose approval expired before it was decided ends as RUN_ERROR APPROVAL_EXPIRED', async () => {
    seq = 0;
    const view = new AgUiProjection({ threadId: 'thread', runId: 'ag-run', engineRunId: RUN, answering: [APPROVAL] });
    const events = [committed('approval.resolved', { approval_id: APPROVAL, result: 'expired' }), partial('It expired.'), committed('assistant.message', { text: 'It expired.' }), finished('done')];
    const frames = [view.runStarted(), ...events.flatMap((e) => view.apply(e))];
    expect(frames.at(-1)!.event).toMatchObject({ type: 'RUN_ERROR', code: 'APPROVAL_EXPIRED' });
    await verified(frames);
    // A cancelled entry (not answering) on an expired approval finishes normally.
    seq = 0;
    const plain = new AgUiProjection({ threadId: 'thread', runId: 'ag-run', engineRunId: RUN });
    expect(events.flatMap((e) => plain.apply(e)).at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED' });
  });

  it('a confirm that leaves others pending names them (added by the adapter)', async () => {
    seq = 0;
    const view = new AgUiProjection({ threadId: 'thread', runId: 'ag-run', engineRunId: RUN });
    view.addInterrupts([{ id: APPROVAL, reason: 'tool_approval' }]);
    const frames = [view.runStarted(), ...view.apply(finished('paused'))];
    expect(frames.at(-1)!.event).toMatchObject({ outcome: { type: 'interrupt', interrupts: [{ id: APPROVAL }] } });
    await verified(frames);
  });

  it('reconnect: state replayed silently, the streamed text resumed under the id the snapshot gave it', async () => {
    seq = 0;
    const history = [committed('user.message', { request_id: 'r', text: 'hi', files: [] })];
    const view = new AgUiProjection({ threadId: 'thread', runId: 'ag-run', engineRunId: RUN });
    for (const e of history) view.apply(e);
    view.resumeText('Hello wor');
    const snapshot = threadMessages(history, { runId: RUN, text: 'Hello wor' });
    expect(snapshot.at(-1)).toEqual({ id: view.currentTextId(), role: 'assistant', content: 'Hello wor' });
    const frames = [view.runStarted(), ...view.apply(partial('ld')), ...view.apply(committed('assistant.message', { text: 'Hello world!' })), ...view.apply(finished('done'))];
    expect(frames.flatMap((f) => (f.event?.type === 'TEXT_MESSAGE_CONTENT' ? [f.event.delta] : []))).toEqual(['ld', '!']);
    expect(frames.find((f) => f.event?.type === 'TEXT_MESSAGE_START')!.event).toMatchObject({ messageId: snapshot.at(-1)!.id });
    await verified(frames);
  });
});

describe('threadMessages (the reconnect snapshot)', () => {
  it('rebuilds user, assistant, tool call and result messages under the live ids', () => {
    seq = 0;
    const other = '11111111-2222-4333-8444-555555555555';
    const events = [
      committed('user.message', { request_id: 'r0', text: 'earlier', files: [] }, other),
      committed('assistant.message', { text: 'Earlier answer' }, other),
      committed('run.finished', { status: 'done', turns: 1, duration_ms: 1, stop_reason: 'x', error_code: null }, other),
      committed('user.message', { request_id: 'r', text: 'check a', files: [] }),
      committed('assistant.message', { text: 'Checking' }),
      committed('tool.call', { tool_call_id: 't1', tool: 'check_health', input: { service: 'a' } }),
      committed('tool.result', { tool_call_id: 't1', tool: 'check_health', status: 'error', error: 'nope', code: 'TOOL_FAILURE' }),
      requested(),
    ];
    expect(threadMessages(events, { runId: RUN, text: 'So far' })).toEqual([
      { id: `${other}:user`, role: 'user', content: 'earlier' },
      { id: `${other}:1`, role: 'assistant', content: 'Earlier answer' },
      { id: `${RUN}:user`, role: 'user', content: 'check a' },
      { id: `${RUN}:4`, role: 'assistant', content: 'Checking' },
      { id: 't1', role: 'assistant', toolCalls: [{ id: 't1', type: 'function', function: { name: 'check_health', arguments: '{"service":"a"}' } }] },
      { id: 't1:result', role: 'tool', toolCallId: 't1', content: '{"error":"nope","code":"TOOL_FAILURE"}' },
      { id: 'call-9', role: 'assistant', toolCalls: [{ id: 'call-9', type: 'function', function: { name: 'deploy_service', arguments: '{"service":"s","version":"1"}' } }] },
      { id: `${RUN}:8`, role: 'assistant', content: 'So far' },
    ]);
  });

  it('the live stream names a message as the snapshot does', () => {
    seq = 0;
    const events = [committed('user.message', { request_id: 'r', text: 'hi', files: [] }), partial('Hi'), committed('assistant.message', { text: 'Hi' })];
    const live = play(events).find((f) => f.event?.type === 'TEXT_MESSAGE_START')!.event as unknown as { messageId: string };
    seq = 0;
    const ledger = [committed('user.message', { request_id: 'r', text: 'hi', files: [] }), committed('assistant.message', { text: 'Hi' })];
    expect(threadMessages(ledger).at(-1)!.id).toBe(live.messageId);
  });

  it("a user message keeps the client's id (issue 24); a missing, reused or clashing one falls back to the server's", () => {
    seq = 0;
    const [r1, r2, r3, r4] = ['11111111-2222-4333-8444-000000000001', '11111111-2222-4333-8444-000000000002', '11111111-2222-4333-8444-000000000003', '11111111-2222-4333-8444-000000000004'];
    const user = (run: string, text: string, id?: string) => committed('user.message', { request_id: text, text, files: [], ...(id ? { client_message_id: id } : {}) }, run);
    const events = [
      user(r1, 'one', 'u1'),
      committed('tool.call', { tool_call_id: 'u3', tool: 'check_health', input: {} }, r1),
      user(r2, 'two'), // /chat: no client id
      user(r3, 'three', 'u1'), // a client that reuses ids
      user(r4, 'four', 'u3'), // the id of a tool call
    ];
    expect(threadMessages(events).map((m) => [m.role, m.id])).toEqual([
      ['user', 'u1'],
      ['assistant', 'u3'],
      ['user', `${r2}:user`],
      ['user', `${r3}:user`],
      ['user', `${r4}:user`],
    ]);
  });
});
