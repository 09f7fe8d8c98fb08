/**
 * Worker thread entry: extracts one PDF (workerData: its bytes) and posts the result. PDF.js parses
 * on the thread it runs on; here that is not the thread that streams everyone's tokens.
 * Plain, erasable TypeScript so that Node runs it with or without a loader.
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import { extractPdf } from './extract.ts';

parentPort?.postMessage(await extractPdf(workerData as Uint8Array));
