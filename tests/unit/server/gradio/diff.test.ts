import { describe, expect, it } from 'vitest';
import { applyOps, diff, snapshot } from '../../../../server/gradio/diff.ts';

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v));

describe('diff', () => {
  const cases: [string, unknown, unknown, unknown[]][] = [
    ['equal strings', 'a', 'a', []],
    ['string suffix growth -> append', 'Hel', 'Hello', [['append', [], 'lo']]],
    ['string change -> replace', 'Hello', 'Help', [['replace', [], 'Help']]],
    ['shrinking string -> replace', 'Hello', 'He', [['replace', [], 'He']]],
    ['type change -> replace', 'x', 1, [['replace', [], 1]]],
    ['null -> value', null, { a: 1 }, [['replace', [], { a: 1 }]]],
    ['number change', 1, 2, [['replace', [], 2]]],
    ['nested append', { content: 'ab', metadata: { type: 't' } }, { content: 'abc', metadata: { type: 't' } }, [['append', ['content'], 'c']]],
    ['object add and delete', { a: 1, b: 2 }, { a: 1, c: 3 }, [['delete', ['b'], null], ['add', ['c'], 3]]],
    ['array growth -> add', [1], [1, 2, 3], [['add', [1], 2], ['add', [2], 3]]],
    ['array shrink -> deletes from the end', [1, 2, 3], [1], [['delete', [2], null], ['delete', [1], null]]],
    ['array element append', [{ c: 'a' }], [{ c: 'ab' }], [['append', [0, 'c'], 'b']]],
    ['array vs object -> replace', [1], { 0: 1 }, [['replace', [], { 0: 1 }]]],
  ];
  it.each(cases)('%s', (_name, prev, next, expected) => {
    expect(diff(prev, next)).toEqual(expected);
  });

  it('costs bytes proportional to the appended part only', () => {
    let prev = { role: 'assistant', content: '', metadata: { type: 'stream_token', token: '' } };
    const sizes: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const token = `tok${i % 10} `;
      const next = { role: 'assistant', content: prev.content + token, metadata: { type: 'stream_token', token } };
      sizes.push(JSON.stringify(diff(prev, next)).length);
      prev = next;
    }
    expect(Math.max(...sizes)).toBeLessThan(80);
    expect(sizes[1999]).toBe(sizes[10]);
  });

  it('round-trips through applyOps (the JS client algorithm) on random edits', () => {
    let seed = 42;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const mutate = (v: any, depth = 0): any => {
      const r = rand();
      if (Array.isArray(v)) {
        const out = v.map((x) => (rand() < 0.3 ? mutate(x, depth + 1) : x));
        if (r < 0.3) out.push(depth < 3 ? { t: 'x' } : 1);
        if (r > 0.8 && out.length) out.splice(Math.floor(rand() * out.length), 1);
        return out;
      }
      if (v && typeof v === 'object') {
        const out: any = {};
        for (const [k, x] of Object.entries(v)) if (rand() > 0.1) out[k] = rand() < 0.4 ? mutate(x, depth + 1) : x;
        if (r < 0.3) out[`k${Math.floor(rand() * 5)}`] = depth < 3 ? [rand()] : 'new';
        return out;
      }
      if (typeof v === 'string') return r < 0.7 ? v + 'z' : r < 0.85 ? v.slice(1) : 7;
      return r < 0.5 ? rand() : 'str';
    };
    let value: any = { content: 'a', list: [1, { t: 'b' }], meta: { n: 1 } };
    for (let i = 0; i < 500; i++) {
      const next = mutate(value);
      const ops = diff(value, next);
      expect(applyOps(clone(value), clone(ops))).toEqual(next);
      value = next;
    }
  });

  it('snapshot copies structure so in-place mutation is still diffed', () => {
    const message = { content: 'a', parts: ['x'] };
    const before = snapshot(message);
    message.content += 'b';
    message.parts.push('y');
    expect(diff(before, message)).toEqual([['append', ['content'], 'b'], ['add', ['parts', 1], 'y']]);
  });
});
