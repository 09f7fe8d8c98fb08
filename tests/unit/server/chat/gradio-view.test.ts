import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../../src/lib/wire/index.ts';
import { forGradioClients, gradioChatMessage, gradioMetadata, pausedContent } from '../../../../server/chat/gradio-view.ts';
import type { EndpointRequest } from '../../../../server/gradio/index.ts';

const msg = (metadata: Record<string, unknown>, content = 'Answer so far.'): ChatMessage =>
  ({ role: 'assistant', content, metadata: { conversation_id: 'c1', ...metadata } }) as ChatMessage;

describe('gradioMetadata (Gradio MetadataDict keys by message type)', () => {
  it.each([
    [{ type: 'tool_start', tool: 'get_order', input: { id: 7 }, tool_call_id: 't1' }, { title: '🛠️ get_order', status: 'pending', id: 't1', log: '{"id":7}' }],
    [{ type: 'tool_end', tool: 'get_order', output: 'ok', tool_call_id: 't1', duration_ms: 1500 }, { title: '🛠️ get_order', status: 'done', id: 't1', duration: 1.5, log: 'ok' }],
    [{ type: 'tool_error', tool: 'get_order', error: 'boom', tool_call_id: 't1' }, { title: '🛠️ get_order failed', status: 'done', id: 't1', log: 'boom' }],
    [{ type: 'stream_token', token: 'x' }, {}],
    [{ type: 'error', code: 'INTERNAL', detail: 'x', retryable: false }, {}],
  ])('%j -> %j', (metadata, expected) => {
    expect(gradioMetadata(msg(metadata).metadata)).toEqual(expected);
  });

  it('truncates a long log to 200 characters', () => {
    const log = gradioMetadata(msg({ type: 'tool_start', tool: 't', input: 'x'.repeat(500), tool_call_id: 't1' }).metadata).log as string;
    expect(log).toHaveLength(200);
    expect(log.endsWith('…')).toBe(true);
  });
});

describe('pausedContent', () => {
  const confirm = { type: 'confirm_required', prompt: 'Restart web-1?', tool: 'restart_service', approval_id: 'ap-1', thread_id: 'c1', input: {}, expires_at: '2026-12-03T07:00:00.000Z', timeout_s: 300 };
  it('appends the approval, the ids and how to confirm to the answer so far', () => {
    expect(pausedContent(msg(confirm))).toBe(
      'Answer so far.\n\nApproval needed: Restart web-1? (tool restart_service). To go ahead, call /chat again with action "confirm" (or "deny" to refuse), conversation_id "c1" and approval_id "ap-1", before 2026-12-03T07:00:00.000Z.',
    );
    expect(pausedContent(msg(confirm, ''))).toMatch(/^Approval needed: Restart web-1\?/);
  });
  it('a batch that pauses for several approvals lists every note, one per line', () => {
    const second = { ...confirm, prompt: 'Restart web-2?', approval_id: 'ap-2' };
    const text = pausedContent(msg(second), ['Approval needed: Restart web-1? …']);
    expect(text.split('\n')).toEqual(['Answer so far.', '', 'Approval needed: Restart web-1? …', expect.stringMatching(/^Approval needed: Restart web-2\?.*approval_id "ap-2"/)]);
  });
  it('leaves other messages alone (same object when nothing changes)', () => {
    const token = msg({ type: 'stream_token', token: 'x' });
    expect(pausedContent(token)).toBe('Answer so far.');
    expect(gradioChatMessage(token)).toBe(token);
  });
});

describe('forGradioClients', () => {
  it('adds the keys and sends log messages for a tool start and an approval wait', async () => {
    const logs: unknown[][] = [];
    const request = { log: (...args: unknown[]) => logs.push(args) } as unknown as EndpointRequest<unknown>;
    const handler = forGradioClients(async function* () {
      yield [msg({ type: 'tool_start', tool: 'get_order', input: {}, tool_call_id: 't1' })];
      yield [msg({ type: 'confirm_required', prompt: 'Go?', tool: 'restart', approval_id: 'ap', thread_id: 'c1', input: {}, expires_at: 'later', timeout_s: 1 })];
    });
    const out: ChatMessage[] = [];
    for await (const [m] of handler(request) as AsyncIterable<[ChatMessage]>) out.push(m);
    expect(out[0].metadata).toMatchObject({ type: 'tool_start', title: '🛠️ get_order', status: 'pending' });
    expect(out[1].content).toContain('approval_id "ap"');
    expect(logs).toEqual([
      ['info', 'Running get_order…', { title: 'Tool started' }],
      ['warning', 'Approval needed: Go?', { title: 'Approval needed', duration: null }],
    ]);
  });
});

describe('chatApprovalQuestion (MCP elicitation for a paused chat)', async () => {
  const { chatApprovalQuestion } = await import('../../../../server/chat/chat-mcp.ts');
  const paused = [msg({ type: 'confirm_required', prompt: 'Restart web-1?', tool: 'restart_service', approval_id: 'ap-1', thread_id: 'c1', input: { service: 'web-1' }, expires_at: 'soon', timeout_s: 300 })];
  it('asks only for a paused run', () => {
    expect(chatApprovalQuestion([msg({ type: 'stream_token', token: 'x' })])).toBeNull();
    expect(chatApprovalQuestion([])).toBeNull();
    expect(chatApprovalQuestion(paused)!.message).toBe('Approval needed: Restart web-1?\nTool restart_service with {"service":"web-1"}. Expires soon.');
    expect(chatApprovalQuestion(paused)!.timeoutMs).toBeUndefined(); // an unparsable expiry: the SDK's default
    const timed = [msg({ ...paused[0].metadata, expires_at: '2026-12-03T07:05:00.000Z' })];
    expect(chatApprovalQuestion(timed, () => Date.parse('2026-12-03T07:00:00.000Z'))!.timeoutMs).toBe(300_000);
    expect(chatApprovalQuestion(timed, () => Date.parse('2026-12-03T08:00:00.000Z'))!.timeoutMs).toBe(1_000);
  });
  it.each([
    [{ action: 'accept', content: { decision: 'confirm' } }, { message: 'confirm', action: 'confirm', conversation_id: 'c1', approval_id: 'ap-1' }],
    [{ action: 'accept', content: { decision: 'deny' } }, { message: 'deny', action: 'deny', conversation_id: 'c1', approval_id: 'ap-1' }],
    [{ action: 'decline' }, { message: 'deny', action: 'deny', conversation_id: 'c1', approval_id: 'ap-1' }],
    [{ action: 'cancel' }, null],
  ] as const)('answer %j -> next call %j', (answer, next) => {
    expect(chatApprovalQuestion(paused)!.next(answer as never)).toEqual(next);
  });
});
