import { describe, expect, it } from 'vitest';
import { isLimitNote, outOfMemoryReason, overMemory, overPageCapReason, timeoutReason, workerFailureReason } from '../../../../server/attachments/pdf-limits.ts';
import { failedNote, userNote } from '../../../../server/attachments/notes.ts';

const MB = 2 ** 20;

describe('pdf limits', () => {
  it('a worker out of memory is a "too large" note; any other worker error says the reader failed, in one short line', () => {
    const oom = Object.assign(new Error('Worker terminated due to reaching memory limit: JS heap out of memory'), { code: 'ERR_WORKER_OUT_OF_MEMORY' });
    expect(workerFailureReason(oom, 256)).toBe('too large (the PDF reader ran out of its 256 MB of memory)');
    expect(workerFailureReason(new Error('Cannot find\nmodule x'), 256)).toBe('the PDF reader failed (Cannot find module x)');
    expect(workerFailureReason('x'.repeat(500), 256)).toHaveLength('the PDF reader failed ()'.length + 200);
  });

  it('the user reads "Could not be read: too large (…)" and the model "The file could not be read: too large (…)"', () => {
    expect(userNote('failed', { reason: overPageCapReason(20000, 500) })).toBe('Could not be read: too large (20000 pages; at most 500 are read).');
    expect(failedNote(outOfMemoryReason(256))).toMatch(/^\[The file could not be read: too large \(the PDF reader ran out of its 256 MB of memory\)\./);
  });

  it('counts the heap as resident plus the buffers against the cap', () => {
    expect(overMemory({ total_physical_size: 200 * MB, external_memory: 56 * MB }, 256)).toBe(false);
    expect(overMemory({ total_physical_size: 200 * MB, external_memory: 57 * MB }, 256)).toBe(true);
  });

  it('limit notes (size, time) are told apart from notes about the file itself', () => {
    expect(isLimitNote(overPageCapReason(600, 500))).toBe(true);
    expect(isLimitNote(outOfMemoryReason(256))).toBe(true);
    expect(isLimitNote(timeoutReason(30_000))).toBe(true);
    expect(timeoutReason(30_000)).toBe('reading the PDF took longer than 30 s');
    expect(isLimitNote('not a readable PDF (Invalid PDF structure.)')).toBe(false);
    expect(isLimitNote('the PDF (3 pages) has no text layer; scanned pages are not read')).toBe(false);
  });
});
