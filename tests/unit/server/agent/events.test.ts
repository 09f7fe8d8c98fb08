import { AIMessageChunk, ToolMessage } from '@langchain/core/messages';
import { GraphInterrupt } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../../../server/errors.ts';
import { contentText, createMappingState, toAgentEvents } from '../../../../server/agent/events.ts';
import { editedResult } from '../../../../server/agent/edited-call.ts';
import type { AgentEvent } from '../../../../server/agent/types.ts';

const model = { langgraph_node: 'model_request' };
const ok = (content: string) => new ToolMessage({ tool_call_id: 'c1', name: 'check_health', content });
const failed = (content: string, code?: string) =>
  new ToolMessage({ tool_call_id: 'c1', name: 'x', status: 'error', content, ...(code ? { artifact: { code } } : {}) });

describe('toAgentEvents', () => {
  const rows: Array<[label: string, part: [string, unknown], expected: AgentEvent[]]> = [
    ['a text delta from the model is a token', ['messages', [new AIMessageChunk({ content: 'Hel' }), model]], [{ type: 'token', token: 'Hel' }]],
    ['text blocks count as text', ['messages', [new AIMessageChunk({ content: [{ type: 'text', text: 'lo' }] }), model]], [{ type: 'token', token: 'lo' }]],
    ['a tool-call fragment has no token', ['messages', [new AIMessageChunk({ content: '', tool_call_chunks: [{ index: 0, args: '{"a' }] }), model]], []],
    ['chunks from other nodes are ignored', ['messages', [new AIMessageChunk({ content: 'x' }), { langgraph_node: 'summarize' }]], []],
    ['tool messages in "messages" are ignored', ['messages', [ok('{}'), { langgraph_node: 'tools' }]], []],
    ['tool start (input JSON parsed)', ['tools', { event: 'on_tool_start', toolCallId: 'c1', name: 'check_health', input: '{"service":"a-b"}' }],
      [{ type: 'tool_start', tool: 'check_health', input: { service: 'a-b' }, toolCallId: 'c1' }]],
    ['tool end with a JSON result', ['tools', { event: 'on_tool_end', toolCallId: 'c9', name: 'check_health', output: ok('{"status":"up"}') }],
      [{ type: 'tool_end', tool: 'check_health', output: { status: 'up' }, toolCallId: 'c9', durationMs: 0 }]],
    ['an MCP result: the card gets the whole artifact output, not the cut text', ['tools', { event: 'on_tool_end', toolCallId: 'c8', name: 'fs_read_file', output: new ToolMessage({ tool_call_id: 'c8', name: 'fs_read_file', content: 'abc\n[Result cut: …]', artifact: { output: { content: 'abcdef' }, truncated: true } }) }],
      [{ type: 'tool_end', tool: 'fs_read_file', output: { content: 'abcdef' }, toolCallId: 'c8', durationMs: 0 }]],
    ['an error ToolMessage is a tool_error with its code', ['tools', { event: 'on_tool_end', toolCallId: 'c1', name: 'check_health', output: failed('{"error":{"code":"TOOL_FAILURE","message":"down"}}', 'TOOL_FAILURE') }],
      [{ type: 'tool_error', tool: 'check_health', error: 'down', code: 'TOOL_FAILURE', toolCallId: 'c1' }]],
    ['a denial has no taxonomy code', ['tools', { event: 'on_tool_end', toolCallId: 'c1', name: 'x', output: failed('{"error":{"code":"DENIED","message":"Not done: the user denied x."}}', 'DENIED') }],
      [{ type: 'tool_error', tool: 'x', error: 'Not done: the user denied x.', toolCallId: 'c1' }]],
    // Issue 37 item 3: an edited call's error result begins with the note for the model; the card gets the tool's error.
    ['an edited call\'s error: the tool\'s words, not the note', ['tools', { event: 'on_tool_end', toolCallId: 'c1', name: 'deploy_service', output: editedResult('deploy_service', 'c1', { environment: 'moon' }, failed('{"error":{"code":"VALIDATION_ERROR","message":"unknown environment moon"}}', 'VALIDATION_ERROR')) }],
      [{ type: 'tool_error', tool: 'deploy_service', error: 'unknown environment moon', code: 'VALIDATION_ERROR', toolCallId: 'c1' }]],
    ['an edited call\'s plain error text', ['tools', { event: 'on_tool_end', toolCallId: 'c1', name: 'x', output: editedResult('x', 'c1', { a: 1 }, failed('Error: bad input')) }],
      [{ type: 'tool_error', tool: 'x', error: 'Error: bad input', toolCallId: 'c1' }]],
    ['langchain\'s plain error text', ['tools', { event: 'on_tool_end', toolCallId: 'c1', name: 'x', output: failed('Error: bad input') }],
      [{ type: 'tool_error', tool: 'x', error: 'Error: bad input', toolCallId: 'c1' }]],
    ['a thrown AirlockError keeps its code', ['tools', { event: 'on_tool_error', toolCallId: 'c1', name: 'x', error: new AirlockError('FORBIDDEN', 'no') }],
      [{ type: 'tool_error', tool: 'x', error: 'no', code: 'FORBIDDEN', toolCallId: 'c1' }]],
    ['any other thrown error is TOOL_FAILURE', ['tools', { event: 'on_tool_error', toolCallId: 'c1', name: 'x', error: new Error('boom') }],
      [{ type: 'tool_error', tool: 'x', error: 'boom', code: 'TOOL_FAILURE', toolCallId: 'c1' }]],
    ['a pause is not an error', ['tools', { event: 'on_tool_error', toolCallId: 'c1', name: 'deploy_service', error: new GraphInterrupt([]) }], []],
    ['updates produce no events', ['updates', { model_request: { messages: [] } }], []],
  ];
  it.each(rows)('%s', (_label, part, expected) => {
    expect(toAgentEvents(part, createMappingState(['deploy_service']), 1000)).toEqual(expected);
  });

  it('measures durationMs from the start', () => {
    const state = createMappingState([]);
    toAgentEvents(['tools', { event: 'on_tool_start', toolCallId: 'c1', name: 'check_health', input: {} }], state, 1000);
    const [end] = toAgentEvents(['tools', { event: 'on_tool_end', toolCallId: 'c1', name: 'check_health', output: ok('{}') }], state, 1250);
    expect(end).toMatchObject({ type: 'tool_end', durationMs: 250 });
  });

  it('holds an approval tool\'s start until it finishes, and drops it when it pauses', () => {
    const state = createMappingState(['deploy_service']);
    const start = ['tools', { event: 'on_tool_start', toolCallId: 'd1', name: 'deploy_service', input: { service: 's' } }] as [string, unknown];
    expect(toAgentEvents(start, state, 0)).toEqual([]);
    expect(toAgentEvents(['tools', { event: 'on_tool_error', toolCallId: 'd1', name: 'deploy_service', error: new GraphInterrupt([]) }], state, 1)).toEqual([]);
    // On resume the tool runs again from the top.
    const resumed = createMappingState(['deploy_service']);
    toAgentEvents(start, resumed, 10);
    const events = toAgentEvents(['tools', { event: 'on_tool_end', toolCallId: 'd1', name: 'deploy_service', output: ok('{"id":"d"}') }], resumed, 30);
    expect(events.map((e) => e.type)).toEqual(['tool_start', 'tool_end']);
    // Marked finished: the turn commits the call with its end, in one transaction.
    expect(events[0]).toMatchObject({ toolCallId: 'd1', finished: true });
    expect(events[1]).toMatchObject({ durationMs: 20, output: { id: 'd' } });
  });

  it('starts an approval tool at once in the resume that runs it with its decision (issue 30 finding 14)', () => {
    const state = createMappingState(['deploy_service'], ['d1']);
    const start = ['tools', { event: 'on_tool_start', toolCallId: 'd1', name: 'deploy_service', input: { service: 's' } }] as [string, unknown];
    expect(toAgentEvents(start, state, 10)).toEqual([{ type: 'tool_start', tool: 'deploy_service', input: { service: 's' }, toolCallId: 'd1' }]);
    const events = toAgentEvents(['tools', { event: 'on_tool_end', toolCallId: 'd1', name: 'deploy_service', output: ok('{"id":"d"}') }], state, 30);
    expect(events).toEqual([{ type: 'tool_end', tool: 'deploy_service', output: { id: 'd' }, toolCallId: 'd1', durationMs: 20 }]);
    // Another approval call of the same run, not resumed, may still pause: held.
    expect(toAgentEvents(['tools', { event: 'on_tool_start', toolCallId: 'd2', name: 'deploy_service', input: {} }], state, 40)).toEqual([]);
  });

  it('notes an interrupt in the state', () => {
    const state = createMappingState([]);
    expect(toAgentEvents(['updates', { __interrupt__: [{ id: 'i1', value: {} }] }], state, 0)).toEqual([]);
    expect(state.interrupted).toBe(true);
  });
});

describe('contentText', () => {
  it.each([
    ['abc', 'abc'],
    [[{ type: 'text', text: 'a' }, { type: 'image_url', image_url: 'x' }, { type: 'text', text: 'b' }], 'ab'],
    [undefined, ''],
  ])('%j -> %j', (content, expected) => expect(contentText(content)).toBe(expected));
});
