/**
 * PDF extraction off the main thread, with real workers: the worker entry runs under plain Node
 * (no loader); a slow PDF is given up with a note; a PDF over the page cap is not read; a PDF too
 * big for the reader's memory is stopped with a note (the process-level test of the same is
 * fault-pdf-bomb.test.ts).
 */
import { Worker } from 'node:worker_threads';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { extractPdfOffThread } from '../../server/attachments/off-thread.ts';
import { createPdfReader } from '../../server/attachments/pdf-reader.ts';
import { manyPagePdf } from '../helpers/pdf-bomb.ts';

const LIMITS = { maxMb: 256, maxPages: 500, timeoutMs: 30_000 };
let big: Uint8Array;
beforeAll(async () => {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 0; p < 60; p++) {
    const page = doc.addPage();
    for (let l = 0; l < 40; l++) page.drawText(`page ${p} line ${l}: the quick brown fox jumps over the lazy dog`, { x: 30, y: 780 - l * 18, font, size: 10 });
  }
  big = await doc.save();
});

describe('extractPdfOffThread', () => {
  it('the worker entry itself runs in a plain worker thread and posts the text', async () => {
    const worker = new Worker(new URL('../../server/attachments/pdf-worker.ts', import.meta.url), { workerData: { bytes: big, maxPages: 500 } });
    const result = await new Promise<{ text?: string; pages?: number; error?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(result.pages).toBe(60);
    expect(result.text).toContain('[page 60]\npage 59 line 0: the quick brown fox');
  });

  it('gives up a PDF that takes too long, with a note', async () => {
    expect(await extractPdfOffThread(big, { ...LIMITS, timeoutMs: 1 })).toEqual({ error: 'reading the PDF took longer than 1 ms' });
  });

  it('reads a PDF of exactly the page cap, and gives a note for one page more, without reading it', async () => {
    const three = manyPagePdf(3);
    const read = await extractPdfOffThread(three, { ...LIMITS, maxPages: 3 });
    expect(read).toMatchObject({ pages: 3, text: expect.stringContaining('[page 3]\npage 3: the quick brown fox') });
    expect(await extractPdfOffThread(three, { ...LIMITS, maxPages: 2 })).toEqual({ error: 'too large (3 pages; at most 2 are read)' });
  });

  it('stops a reader past its memory and says the PDF is too large (20,000 pages, page cap lifted, 64 MB)', async () => {
    const started = Date.now();
    const result = await createPdfReader({ maxMb: 64, maxPages: 100_000 }).read(manyPagePdf(20_000));
    expect(result).toEqual({ error: 'too large (the PDF reader ran out of its 64 MB of memory)' });
    // Stopped as it passed 64 MB, long before the 30 s limit (a 256 MB reader takes ~5 s to fill).
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
