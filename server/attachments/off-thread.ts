/**
 * PDF extraction off the main thread: a worker per PDF (PDFs are parsed once per content, so the
 * ~50 ms start-up is paid rarely), with a time limit. A 100-page PDF takes 0.6–1.3 s of PDF.js on
 * this machine: on the main thread that would stall every open stream for as long.
 * @module
 */
import { Worker } from 'node:worker_threads';
import { extractPdf, type Extracted } from './extract.ts';

/** Time one PDF may take before it is given up (a note, not a failed turn). */
export const PDF_TIMEOUT_MS = 30_000;

/** Extracts in a worker; falls back to this thread only if a worker cannot run at all. */
export function extractPdfOffThread(bytes: Uint8Array, timeoutMs = PDF_TIMEOUT_MS): Promise<Extracted> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(new URL('./pdf-worker.ts', import.meta.url), { workerData: bytes });
    } catch {
      resolve(extractPdf(bytes));
      return;
    }
    let settled = false;
    const settle = (result: Extracted | Promise<Extracted>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(result);
    };
    const timer = setTimeout(() => settle({ error: `reading the PDF took longer than ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}` }), timeoutMs);
    worker.once('message', (result: Extracted) => settle(result));
    // extractPdf catches parse errors itself: an 'error' here means the worker could not run.
    worker.once('error', () => settle(extractPdf(bytes)));
    worker.once('exit', (code) => settle({ error: `the PDF reader stopped (exit code ${code})` }));
  });
}
