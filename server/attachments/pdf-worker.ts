/**
 * Worker thread entry: extracts one PDF (workerData: its bytes and the page cap) and posts the
 * result. PDF.js parses on the thread it runs on; here that is not the thread that streams
 * everyone's tokens, and this thread's heap is capped by the `resourceLimits` it was started with.
 * Plain, erasable TypeScript so that Node runs it with or without a loader.
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import { extractPdf } from './extract.ts';

/** What off-thread.ts hands this worker. */
export interface PdfJob {
  bytes: Uint8Array;
  maxPages: number;
}

const job = workerData as PdfJob;
parentPort?.postMessage(await extractPdf(job.bytes, job.maxPages));
