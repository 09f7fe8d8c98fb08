import { describe, expect, it } from 'vitest';
import { storableJson, storableText } from '../../../../server/db/storable.ts';

describe('storableText', () => {
  it('replaces every NUL with U+FFFD and keeps the rest', () => {
    expect(storableText('a\u0000b\u0000')).toBe('a\uFFFDb\uFFFD');
    expect(storableText('plain é 🚀')).toBe('plain é 🚀');
  });
});

describe('storableJson', () => {
  it('cleans NUL in strings and keys, at any depth', () => {
    const value = { 'k\u0000': ['x\u0000y', { deep: '\u0000' }], n: 1 };
    expect(JSON.parse(storableJson(value))).toEqual({ 'k\uFFFD': ['x\uFFFDy', { deep: '\uFFFD' }], n: 1 });
  });

  it('keeps the literal text \\u0000 (an escaped backslash) as it is', () => {
    for (const text of ['\\u0000', '\\\\u0000', 'a\\\u0000']) {
      expect(JSON.parse(storableJson({ text }))).toEqual({ text: text.replaceAll('\u0000', '\uFFFD') });
    }
  });

  it('is JSON.stringify when there is no NUL', () => {
    expect(storableJson({ a: [1, 'b'] })).toBe('{"a":[1,"b"]}');
    expect(storableJson(null)).toBe('null');
  });
});
