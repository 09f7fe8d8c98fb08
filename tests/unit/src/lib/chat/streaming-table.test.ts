import { describe, expect, it } from 'vitest';
import { renderStreaming } from '../../../../../src/lib/chat/markdown.ts';
import { relativeTime } from '../../../../../src/lib/chat/relative-time.ts';
import { completeStreamingTable } from '../../../../../src/lib/chat/streaming-table.ts';

describe('completeStreamingTable', () => {
  it.each([
    ['| service | status |', '| service | status |\n| --- | --- |'],
    ['| service | status', '| service | status |\n| --- | --- |'],
    ['| service | status |\n| --- | -', '| service | status |\n| --- | --- |'],
    ['| service | status |\n|', '| service | status |\n| --- | --- |'],
  ])('%j renders as a table head', (block, whole) => {
    expect(completeStreamingTable(block)).toBe(whole);
    expect(renderStreaming(block)).toMatch(/<table>\n<thead>\n<tr>\n<th>service<\/th>\n<th>status<\/th>/);
  });
  it('leaves a table with its rows, and other blocks, as they are', () => {
    const table = '| a | b |\n| --- | --- |\n| 1 | 2';
    expect(completeStreamingTable(table)).toBe(table);
    expect(renderStreaming(table)).toContain('<td>1</td>');
    expect(completeStreamingTable('Some text | with a pipe')).toBe('Some text | with a pipe');
  });
});

describe('relativeTime', () => {
  const now = Date.parse('2026-12-05T12:00:00Z');
  it.each([
    ['2026-12-05T11:59:50Z', 'just now'],
    ['2026-12-05T11:55:00Z', '5 min ago'],
    ['2026-12-05T10:00:00Z', '2 h ago'],
    ['2026-12-02T12:00:00Z', '3 d ago'],
    ['2026-12-05T14:00:00+00:00', 'in 2 h'],
    ['2026-09-01T00:00:00Z', '2026-09-01'],
    ['not a time', null],
  ])('%s -> %s', (iso, text) => expect(relativeTime(iso, now)).toBe(text));
});

describe('ISO times in markdown', () => {
  it('render as <time> with the ISO time as datetime and title, not inside code', () => {
    const html = renderStreaming('Deployed at 2020-01-02T03:04:05Z and `2020-01-02T03:04:05Z`');
    expect(html).toContain('<time datetime="2020-01-02T03:04:05Z" title="2020-01-02T03:04:05Z">2020-01-02</time>');
    expect(html).toContain('<code>2020-01-02T03:04:05Z</code>');
  });
});
