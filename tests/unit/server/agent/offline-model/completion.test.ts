import { describe, expect, it } from 'vitest';
import { completionBody, newCompletionId, splitWords, streamChunks } from '../../../../../server/agent/offline-model/completion.ts';

const base = { id: 'chatcmpl-1', model: 'm', created: 0 };
let n = 0;
const ids = () => `call_${++n}`;

describe('offline model wire shapes', () => {
  it.each(['Hello world', '  leading and trailing  ', 'a\n\n| x |\n| - |', ''])('splits %j into words that join back', (text) => {
    expect(splitWords(text).join('')).toBe(text.trim() === '' ? '' : text);
  });

  it('streams text word by word, then stop and usage', () => {
    const chunks = streamChunks(base, { type: 'text', text: 'Hi there' }, { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }) as any[];
    expect(chunks.map((c) => c.choices[0]?.delta ?? 'usage')).toEqual([{ role: 'assistant', content: '' }, { content: 'Hi ' }, { content: 'there' }, {}, 'usage']);
    expect(chunks[3].choices[0].finish_reason).toBe('stop');
    expect(chunks[4]).toMatchObject({ choices: [], usage: { total_tokens: 3 } });
  });

  it('streams tool calls in the standard delta format', () => {
    n = 0;
    const chunks = streamChunks(base, { type: 'tool_calls', calls: [{ tool: 'a', args: { x: 1 } }, { tool: 'b', args: {} }] }, null, ids) as any[];
    const deltas = chunks.slice(1, -1).map((c) => c.choices[0].delta.tool_calls[0]);
    expect(deltas[0]).toEqual({ index: 0, id: 'call_1', type: 'function', function: { name: 'a', arguments: '' } });
    expect(deltas.filter((d) => d.index === 0).map((d) => d.function.arguments).join('')).toBe('{"x":1}');
    expect(deltas.find((d) => d.index === 1 && d.id)).toMatchObject({ id: 'call_2', function: { name: 'b' } });
    expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
  });

  it('builds a non-streamed completion with JSON-string arguments', () => {
    n = 0;
    const body = completionBody(base, { type: 'tool_calls', calls: [{ tool: 'a', args: { x: 1 } }] }, { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, ids);
    expect(body.choices[0]).toEqual({
      index: 0, finish_reason: 'tool_calls',
      message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'a', arguments: '{"x":1}' } }] },
    });
  });

  it('gives every completion a fresh id (the messages reducer replaces equal ids)', () => {
    expect(newCompletionId()).not.toBe(newCompletionId());
  });
});
