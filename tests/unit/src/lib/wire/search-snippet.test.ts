import { describe, expect, it } from 'vitest';
import { HIT_END as E, HIT_START as S, snippetParts } from '../../../../../src/lib/wire/search-snippet.ts';

describe('snippetParts: ts_headline marks -> parts', () => {
  it.each([
    ['no hit', 'plain text', [{ text: 'plain text', hit: false }]],
    ['one hit inside', `the ${S}kafka${E} lag`, [{ text: 'the ', hit: false }, { text: 'kafka', hit: true }, { text: ' lag', hit: false }]],
    ['hits at both ends', `${S}a${E} b ${S}c${E}`, [{ text: 'a', hit: true }, { text: ' b ', hit: false }, { text: 'c', hit: true }]],
    ['whitespace collapsed, ends trimmed', `  one\n\n ${S}two${E}\t`, [{ text: 'one ', hit: false }, { text: 'two', hit: true }]],
    ['an unclosed mark runs to the end', `x ${S}y`, [{ text: 'x ', hit: false }, { text: 'y', hit: true }]],
    ['empty', '', []],
  ])('%s', (_name, marked, parts) => {
    expect(snippetParts(marked)).toEqual(parts);
  });
});
