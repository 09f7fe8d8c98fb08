/**
 * What one PDF may cost, and what the user is told when it costs more. Pure.
 *
 * PDF.js keeps every page it has read in memory, so a small file can need gigabytes (the audit's
 * 6.7 MB, 20,000-page PDF peaked at 2.3 GB and killed a process with a 768 MB heap). Three limits
 * bound it: a heap per reader (a Worker's `resourceLimits`), how many readers run at once, and a
 * page cap checked before any page is read. Over a limit, the file becomes a note ("too large"),
 * never a failed turn and never a dead process.
 * @module
 */

/** The settings ATTACHMENT_PDF_MAX_MB, ATTACHMENT_PDF_WORKERS and ATTACHMENT_PDF_MAX_PAGES. */
export interface PdfLimits {
  /** Memory of one reader (its heap and its buffers), MB. */
  maxMb: number;
  /** Readers running at once in this process; more PDFs wait their turn (first come, first served). */
  workers: number;
  /**
   * A PDF with more pages is not read at all: it becomes a note. Reading only the first pages
   * would look like the whole file to the model, and would be cached by content hash under this
   * cap even after the cap is raised.
   */
  maxPages: number;
  /** Time one PDF may take once its reader runs (not counting its wait for a free reader). */
  timeoutMs: number;
}

export const PDF_LIMIT_DEFAULTS: PdfLimits = { maxMb: 256, workers: 2, maxPages: 500, timeoutMs: 30_000 };

/**
 * The word every over-limit note starts with; the user sees "Could not be read: too large (…)".
 * Such notes are not cached (see `isLimitNote`): a raised limit reads the file next time.
 */
export const TOO_LARGE = 'too large';

/** "too large (20000 pages; at most 500 are read)". */
export function overPageCapReason(pages: number, maxPages: number): string {
  return `${TOO_LARGE} (${pages} pages; at most ${maxPages} are read)`;
}

/** "too large (the PDF reader ran out of its 256 MB of memory)". */
export function outOfMemoryReason(maxMb: number): string {
  return `${TOO_LARGE} (the PDF reader ran out of its ${maxMb} MB of memory)`;
}

/** What the reader's heap statistics say it holds (worker.getHeapStatistics()). */
export interface ReaderMemory {
  total_physical_size: number;
  external_memory: number;
}

/**
 * Whether a reader holds more than its `maxMb`: its heap as resident in memory plus the buffers
 * it allocated (the PDF's bytes among them), which the heap limit does not count.
 * @example overMemory({ total_physical_size: 300 * 2 ** 20, external_memory: 0 }, 256) // true
 */
export function overMemory(memory: ReaderMemory, maxMb: number): boolean {
  return memory.total_physical_size + memory.external_memory > maxMb * 2 ** 20;
}

/** "reading the PDF took longer than 30 s". */
export function timeoutReason(timeoutMs: number): string {
  return `reading the PDF took longer than ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}`;
}

/**
 * Why a reader worker failed, from its 'error' event: out of memory is the file's size, anything
 * else is the reader's own failure (said briefly, never a stack).
 */
export function workerFailureReason(error: unknown, maxMb: number): string {
  if ((error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY') return outOfMemoryReason(maxMb);
  const message = error instanceof Error ? error.message : String(error);
  return `the PDF reader failed (${message.replace(/\s+/g, ' ').slice(0, 200)})`;
}

/**
 * A note that depends on this process's limits (size, time) rather than on the file alone:
 * it is not stored in the extract cache, so raising a limit, or a less busy moment, reads the file.
 */
export function isLimitNote(reason: string): boolean {
  return reason.startsWith(TOO_LARGE) || reason.startsWith('reading the PDF took longer');
}
