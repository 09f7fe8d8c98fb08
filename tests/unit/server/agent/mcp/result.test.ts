import { describe, expect, it } from 'vitest';
import { blockText, cardMaxChars, cutForModel, renderMcpResult } from '../../../../../server/agent/mcp/result.ts';

describe('renderMcpResult', () => {
  it('text: the card and the model read the text', () => {
    expect(renderMcpResult({ content: [{ type: 'text', text: 'hello' }] }, 100)).toEqual({ output: 'hello', modelText: 'hello', truncated: false, isError: false });
  });

  it('JSON text: the card gets the parsed object', () => {
    expect(renderMcpResult({ content: [{ type: 'text', text: '{"a":1}' }] }, 100).output).toEqual({ a: 1 });
  });

  it('structuredContent wins for the card and the model', () => {
    const r = renderMcpResult({ content: [{ type: 'text', text: 'legacy' }], structuredContent: { t: 36 } }, 100);
    expect(r.output).toEqual({ t: 36 });
    expect(r.modelText).toBe('{"t":36}');
  });

  it('binary blocks are named, not dumped', () => {
    expect(blockText({ type: 'image', data: 'AAAA'.repeat(1000), mimeType: 'image/png' })).toBe('[image: image/png]');
    expect(blockText({ type: 'resource_link', uri: 'demo://x', name: 'x' })).toBe('[resource: demo://x (x)]');
    expect(blockText({ type: 'resource', resource: { uri: 'demo://t', text: 'inline' } })).toBe('inline');
  });

  it('isError is reported; no content says so', () => {
    expect(renderMcpResult({ content: [{ type: 'text', text: 'boom' }], isError: true }, 100)).toMatchObject({ isError: true, modelText: 'boom' });
    expect(renderMcpResult({ content: [] }, 100).modelText).toBe('(no content)');
  });

  it('a long result is cut for the model with a note, never silently; the card keeps it whole', () => {
    const text = 'x'.repeat(250);
    const r = renderMcpResult({ content: [{ type: 'text', text }] }, 100);
    expect(r.output).toBe(text);
    expect(r.truncated).toBe(true);
    expect(r.modelText).toBe(`${'x'.repeat(100)}\n[Result cut: 250 characters, only the first 100 are shown.]`);
    expect(cutForModel('short', 100)).toEqual({ text: 'short', truncated: false });
  });

  it('a huge result is cut on the card too, past ten times the limit (at least 100 000)', () => {
    const huge = 'y'.repeat(150_000);
    const r = renderMcpResult({ structuredContent: { content: huge } }, 1000);
    expect(cardMaxChars(1000)).toBe(100_000);
    expect(typeof r.output).toBe('string');
    expect(String(r.output)).toMatch(/\[Result cut: 150014 characters, only the first 100000 are shown\.\]$/);
  });
});
