import { describe, expect, it } from 'vitest';
import { resumeCursor, sseComment, sseFrame } from '../../../../server/http/sse-format.ts';

describe('sseFrame', () => {
  it('writes id, event and JSON data, ending with a blank line', () => {
    expect(sseFrame({ id: 7, event: 'tool.call', data: { a: 'x' } })).toBe('id: 7\nevent: tool.call\ndata: {"a":"x"}\n\n');
    expect(sseFrame({ event: 'partial', data: { token: 'hi\nthere' } })).toBe('event: partial\ndata: {"token":"hi\\nthere"}\n\n');
  });
  it('refuses CR or LF in id and event (no forged frames)', () => {
    expect(() => sseFrame({ id: '1\nevent: drain', event: 'x', data: 1 })).toThrow(/CR or LF/);
    expect(() => sseFrame({ event: 'x\r\ndata: 1', data: 1 })).toThrow(/CR or LF/);
  });
  it('comments are one line', () => {
    expect(sseComment('heart\nbeat')).toBe(': heart beat\n\n');
  });
});

describe('resumeCursor', () => {
  const cases: Array<[string | string[] | undefined, number | undefined, number]> = [
    [undefined, undefined, 0],
    [undefined, 5, 5],
    ['9', 5, 9], // Last-Event-ID wins
    [' 12 ', undefined, 12],
    ['abc', 5, 5], // not a seq: ignored
    ['-1', 3, 3],
    [['4', '8'], 1, 4],
  ];
  it.each(cases)('Last-Event-ID %j, after %j -> %i', (lastEventId, after, expected) => {
    expect(resumeCursor({ lastEventId, after })).toBe(expected);
  });
});
