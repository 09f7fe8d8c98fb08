/**
 * The process's PDF reader: each PDF in a worker with a capped heap (off-thread.ts), at most
 * `workers` of them at once, the others waiting first come, first served. Together these bound
 * what PDFs can take: about `workers` x (`maxMb` + ~30 MB a worker needs beyond what its cap
 * counts) on top of the process's own memory, whatever is uploaded and however many PDFs a message
 * or a crowd of users sends at once (measured in tests/integration/fault-pdf-bomb.test.ts).
 * @module
 */
import type { Extracted } from './extract.ts';
import { createFifoLimiter } from './fifo-limiter.ts';
import { extractPdfOffThread, spawnPdfWorker, type SpawnPdfWorker } from './off-thread.ts';
import { PDF_LIMIT_DEFAULTS, type PdfLimits } from './pdf-limits.ts';

export interface PdfReader {
  /** The PDF's text or a note; never throws, never runs PDF.js on the calling thread. */
  read(bytes: Uint8Array): Promise<Extracted>;
  /** Readers running and PDFs waiting for one (for tests and metrics). */
  readonly running: number;
  readonly waiting: number;
}

/**
 * A reader with its own queue. Create one per process (createChatAttachments does): each reader
 * allows `limits.workers` workers of its own.
 */
export function createPdfReader(limits: Partial<PdfLimits> = {}, spawn: SpawnPdfWorker = spawnPdfWorker): PdfReader {
  const settings = withDefaults(limits);
  const slots = createFifoLimiter(settings.workers);
  return {
    read: (bytes) => slots.run(() => extractPdfOffThread(bytes, settings, spawn)),
    get running() {
      return slots.active;
    },
    get waiting() {
      return slots.queued;
    },
  };
}

/** The limits given, the defaults for the rest (an `undefined` value counts as not given). */
export function withDefaults(limits: Partial<PdfLimits>): PdfLimits {
  const given = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
  return { ...PDF_LIMIT_DEFAULTS, ...given };
}

let shared: PdfReader | undefined;

/** A reader at the default limits, for callers that bring none (one per process, made on first use). */
export function defaultPdfReader(): PdfReader {
  return (shared ??= createPdfReader());
}
