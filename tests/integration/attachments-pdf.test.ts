/**
 * PDF extraction off the main thread: the worker entry runs under plain Node (no loader), and a
 * slow PDF is given up with a note.
 */
import { Worker } from 'node:worker_threads';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { extractPdfOffThread } from '../../server/attachments/off-thread.ts';

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
    const worker = new Worker(new URL('../../server/attachments/pdf-worker.ts', import.meta.url), { workerData: big });
    const result = await new Promise<{ text?: string; pages?: number; error?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(result.pages).toBe(60);
    expect(result.text).toContain('[page 60]\npage 59 line 0: the quick brown fox');
  });

  it('gives up a PDF that takes too long, with a note', async () => {
    expect(await extractPdfOffThread(big, 1)).toEqual({ error: 'reading the PDF took longer than 1 ms' });
  });
});
