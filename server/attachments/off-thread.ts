/**
 * One PDF read in a Worker of its own, with its memory capped and a time limit. A worker per PDF:
 * PDFs are parsed once per content (the extract cache), so the ~50 ms start-up is paid rarely,
 * and a worker stopped for its size takes all of its memory with it.
 *
 * The cap is enforced twice. The worker's `resourceLimits` let V8 stop it at its heap limit; but a
 * process started with `--max-old-space-size` (or NODE_OPTIONS carrying it) gives that size to
 * every worker whatever `resourceLimits` say (nodejs/node#43991: the V8 flag wins), so a watchdog
 * also reads the worker's heap statistics every `MEMORY_CHECK_MS` and stops it past `maxMb`.
 *
 * Never on the main thread: whatever happens to the worker (too large, cannot start, crashed, too
 * slow) the answer is a note. A re-parse here after a worker died of a large PDF is what used to
 * kill the whole process (issue 30, item 3).
 * @module
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { Extracted } from './extract.ts';
import { outOfMemoryReason, overMemory, timeoutReason, workerFailureReason, type PdfLimits, type ReaderMemory } from './pdf-limits.ts';
import type { PdfJob } from './pdf-worker.ts';

/**
 * How often the watchdog looks at a reader's memory. PDF.js grew a heap by about 40 MB/s here, so
 * a reader overshoots its cap by a few MB at most before it is stopped.
 */
export const MEMORY_CHECK_MS = 100;

/** The part of a Worker this module uses (tests give a fake one). */
export interface PdfWorker {
  once(event: 'message', listener: (result: Extracted) => void): unknown;
  once(event: 'error', listener: (error: unknown) => void): unknown;
  once(event: 'exit', listener: (code: number) => void): unknown;
  getHeapStatistics(): Promise<ReaderMemory>;
  terminate(): Promise<unknown>;
}

export type SpawnPdfWorker = (job: PdfJob, resourceLimits: ResourceLimits) => PdfWorker;

/** The real worker thread, running pdf-worker.ts. */
export const spawnPdfWorker: SpawnPdfWorker = (job, resourceLimits) =>
  new Worker(new URL('./pdf-worker.ts', import.meta.url), { workerData: job, resourceLimits });

/**
 * The worker's heap: `maxMb` in all. Setting the old generation alone is not enough: V8 then sizes
 * the young generation after the main thread's heap (a 256 MB worker measured a 470 MB heap
 * limit). A sixteenth, at most 16 MB, is the young generation; the rest the old one, where PDF.js
 * keeps its pages.
 */
export function pdfResourceLimits(limits: Pick<PdfLimits, 'maxMb'>): ResourceLimits {
  const young = Math.min(16, Math.max(1, Math.floor(limits.maxMb / 16)));
  return { maxYoungGenerationSizeMb: young, maxOldGenerationSizeMb: limits.maxMb - young };
}

/**
 * Extracts in a worker. Resolves once the worker has stopped (so a caller counting running
 * workers never counts one still holding its memory); never rejects.
 */
export function extractPdfOffThread(
  bytes: Uint8Array,
  limits: Pick<PdfLimits, 'maxMb' | 'maxPages' | 'timeoutMs'>,
  spawn: SpawnPdfWorker = spawnPdfWorker,
  memoryCheckMs = MEMORY_CHECK_MS,
): Promise<Extracted> {
  return new Promise((resolve) => {
    let worker: PdfWorker;
    try {
      worker = spawn({ bytes, maxPages: limits.maxPages }, pdfResourceLimits(limits));
    } catch (error) {
      resolve({ error: workerFailureReason(error, limits.maxMb) });
      return;
    }
    let settled = false;
    const settle = (result: Extracted) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(watchdog);
      const done = () => resolve(result);
      worker.terminate().then(done, done);
    };
    const timer = setTimeout(() => settle({ error: timeoutReason(limits.timeoutMs) }), limits.timeoutMs);
    const watchdog = setInterval(() => {
      worker.getHeapStatistics().then(
        (memory) => overMemory(memory, limits.maxMb) && settle({ error: outOfMemoryReason(limits.maxMb) }),
        () => {}, // the worker has stopped: its own events settle
      );
    }, memoryCheckMs);
    worker.once('message', (result) => settle(result));
    // extractPdf catches parse errors itself: an 'error' here is the worker's own (out of memory, crashed).
    worker.once('error', (error) => settle({ error: workerFailureReason(error, limits.maxMb) }));
    worker.once('exit', (code) => settle({ error: `the PDF reader stopped (exit code ${code})` }));
  });
}
