/**
 * One PDF in a worker, with fake workers: whatever the worker does, the answer is a note, and the
 * PDF is never parsed on this thread (the fallback that used to kill the process, issue 30).
 */
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Extracted } from '../../../../server/attachments/extract.ts';
import type { ReaderMemory } from '../../../../server/attachments/pdf-limits.ts';

// A main-thread parse would go through extractPdf: count every call.
const mainThreadParses = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../../../server/attachments/extract.ts', async (original) => ({
  ...(await original<typeof import('../../../../server/attachments/extract.ts')>()),
  extractPdf: async () => {
    mainThreadParses.count++;
    return { text: 'parsed on the main thread', pages: 1 };
  },
}));

const { extractPdfOffThread, pdfResourceLimits } = await import('../../../../server/attachments/off-thread.ts');

const MB = 2 ** 20;
const LIMITS = { maxMb: 256, maxPages: 500, timeoutMs: 5_000 };
const BYTES = new Uint8Array([0x25, 0x50, 0x44, 0x46]);

/** A worker the test drives: it emits what the test says and reports the heap it is told. */
class FakeWorker extends EventEmitter {
  memory: ReaderMemory = { total_physical_size: 40 * MB, external_memory: 10 * MB };
  terminated = 0;
  exited = false;
  async getHeapStatistics(): Promise<ReaderMemory> {
    if (this.exited) throw new Error('worker has exited');
    return this.memory;
  }
  async terminate() {
    this.terminated++;
    this.exited = true;
    return 1;
  }
}

function fake() {
  const worker = new FakeWorker();
  const spawned: Array<{ job: unknown; limits: unknown }> = [];
  const spawn = (job: unknown, limits: unknown) => {
    spawned.push({ job, limits });
    return worker;
  };
  return { worker, spawn, spawned };
}

afterEach(() => {
  mainThreadParses.count = 0;
  vi.useRealTimers();
});

describe('extractPdfOffThread', () => {
  it('gives the worker the bytes, the page cap and a heap of maxMb in all', async () => {
    const { worker, spawn, spawned } = fake();
    const result = extractPdfOffThread(BYTES, LIMITS, spawn);
    worker.emit('message', { text: 'hello', pages: 1 } satisfies Extracted);
    expect(await result).toEqual({ text: 'hello', pages: 1 });
    expect(spawned).toEqual([{ job: { bytes: BYTES, maxPages: 500 }, limits: { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 240 } }]);
    expect(pdfResourceLimits({ maxMb: 64 })).toEqual({ maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 60 });
    expect(worker.terminated).toBe(1);
  });

  it('a worker out of memory: a "too large" note, and no parse on the main thread', async () => {
    const { worker, spawn } = fake();
    const result = extractPdfOffThread(BYTES, LIMITS, spawn);
    worker.emit('error', Object.assign(new Error('Worker terminated due to reaching memory limit: JS heap out of memory'), { code: 'ERR_WORKER_OUT_OF_MEMORY' }));
    worker.emit('exit', 1);
    expect(await result).toEqual({ error: 'too large (the PDF reader ran out of its 256 MB of memory)' });
    expect(mainThreadParses.count).toBe(0);
  });

  it('a worker that fails otherwise: a note naming the failure, and no parse on the main thread', async () => {
    const { worker, spawn } = fake();
    const result = extractPdfOffThread(BYTES, LIMITS, spawn);
    worker.emit('error', new Error('Cannot find module unpdf'));
    expect(await result).toEqual({ error: 'the PDF reader failed (Cannot find module unpdf)' });
    expect(mainThreadParses.count).toBe(0);
  });

  it('a worker that cannot start: a note, and no parse on the main thread', async () => {
    const spawn = () => {
      throw Object.assign(new Error('Worker initialization failure: 1'), { code: 'ERR_WORKER_INIT_FAILED' });
    };
    expect(await extractPdfOffThread(BYTES, LIMITS, spawn)).toEqual({ error: 'the PDF reader failed (Worker initialization failure: 1)' });
    expect(mainThreadParses.count).toBe(0);
  });

  it('a worker that exits without an answer: a note', async () => {
    const { worker, spawn } = fake();
    const result = extractPdfOffThread(BYTES, LIMITS, spawn);
    worker.emit('exit', 7);
    expect(await result).toEqual({ error: 'the PDF reader stopped (exit code 7)' });
    expect(mainThreadParses.count).toBe(0);
  });

  it('the watchdog stops a worker whose heap and buffers pass maxMb (V8 may not: --max-old-space-size overrides resourceLimits)', async () => {
    const { worker, spawn } = fake();
    const result = extractPdfOffThread(BYTES, LIMITS, spawn, 5);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(worker.terminated).toBe(0); // 50 MB: under the cap, left alone
    worker.memory = { total_physical_size: 250 * MB, external_memory: 7 * MB };
    expect(await result).toEqual({ error: 'too large (the PDF reader ran out of its 256 MB of memory)' });
    expect(worker.terminated).toBe(1);
    expect(mainThreadParses.count).toBe(0);
  });

  it('a worker over its time: a note, resolved only once the worker has stopped', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const { worker, spawn } = fake();
    let stopped!: () => void;
    worker.terminate = () => new Promise((resolve) => (stopped = () => resolve(1)));
    let settled = false;
    const result = extractPdfOffThread(BYTES, LIMITS, spawn).then((r) => ((settled = true), r));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(settled).toBe(false); // terminating: its memory is not free yet
    stopped();
    expect(await result).toEqual({ error: 'reading the PDF took longer than 5 s' });
  });
});
