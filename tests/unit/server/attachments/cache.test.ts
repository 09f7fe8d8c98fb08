import { describe, expect, it } from 'vitest';
import { cachedExtract, type ExtractCache } from '../../../../server/attachments/cache.ts';
import type { Extracted } from '../../../../server/attachments/extract.ts';

function memoryCache() {
  const rows = new Map<string, Extracted>();
  const cache: ExtractCache = { get: async (h) => rows.get(h) ?? null, put: async (h, _kind, e) => void rows.set(h, e) };
  return { rows, cache };
}

describe('cachedExtract', () => {
  it('stores a text and a note about the file itself, and answers from the cache the next time', async () => {
    const { rows, cache } = memoryCache();
    let parses = 0;
    const parse = (result: Extracted) => async () => (parses++, result);
    await cachedExtract(cache, Buffer.from('a'), 'pdf', parse({ text: 'hello', pages: 1 }));
    await cachedExtract(cache, Buffer.from('b'), 'pdf', parse({ error: 'not a readable PDF (bad xref)' }));
    expect(await cachedExtract(cache, Buffer.from('a'), 'pdf', parse({ text: 'again', pages: 1 }))).toEqual({ text: 'hello', pages: 1 });
    expect(rows.size).toBe(2);
    expect(parses).toBe(2);
  });

  it('does not store a note of this process\'s limits: once a limit is raised, the file is read', async () => {
    const { rows, cache } = memoryCache();
    for (const error of ['too large (20000 pages; at most 500 are read)', 'too large (the PDF reader ran out of its 256 MB of memory)', 'reading the PDF took longer than 30 s']) {
      expect(await cachedExtract(cache, Buffer.from(error), 'pdf', async () => ({ error }))).toEqual({ error });
    }
    expect(rows.size).toBe(0);
  });
});
