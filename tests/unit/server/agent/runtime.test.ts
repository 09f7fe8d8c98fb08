import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../../../server/errors.ts';
import { danglingToolCalls, unwrapAirlockError } from '../../../../server/agent/runtime.ts';

const ai = (...ids: string[]) => new AIMessage({ content: '', tool_calls: ids.map((id) => ({ id, name: `t_${id}`, args: {} })) });
const reply = (id: string) => new ToolMessage({ tool_call_id: id, content: '{}' });

describe('danglingToolCalls', () => {
  it.each([
    ['no messages', [], []],
    ['a plain conversation', [new HumanMessage('hi'), new AIMessage('hello')], []],
    ['all calls answered', [new HumanMessage('x'), ai('a', 'b'), reply('a'), reply('b'), new AIMessage('done')], []],
    ['an abort during tools', [new HumanMessage('x'), ai('a', 'b'), reply('a')], [{ id: 'b', name: 't_b' }]],
    ['only the last AI message counts', [ai('old'), new HumanMessage('x'), ai('a')], [{ id: 'a', name: 't_a' }]],
  ])('%s', (_label, messages, expected) => expect(danglingToolCalls(messages)).toEqual(expected));
});

describe('unwrapAirlockError', () => {
  it('finds the AirlockError that langchain wrapped in a MiddlewareError', () => {
    const inner = new AirlockError('LLM_UNAVAILABLE');
    const wrapped = Object.assign(new Error(inner.message, { cause: inner }), { name: 'AirlockError' });
    expect(unwrapAirlockError(wrapped)).toBe(inner);
  });
  it('leaves other errors alone', () => {
    const e = new Error('x');
    expect(unwrapAirlockError(e)).toBe(e);
    expect(unwrapAirlockError('s')).toBe('s');
  });
});
