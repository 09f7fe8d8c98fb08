/**
 * The process's PDF reader: at most ATTACHMENT_PDF_WORKERS workers at once, the other PDFs waiting
 * first come, first served (fake workers the test finishes by hand).
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createPdfReader, withDefaults } from '../../../../server/attachments/pdf-reader.ts';

class FakeWorker extends EventEmitter {
  constructor(readonly name: string) {
    super();
  }
  async getHeapStatistics() {
    return { total_physical_size: 0, external_memory: 0 };
  }
  async terminate() {
    this.emit('exit', 1);
    return 1;
  }
  answer() {
    this.emit('message', { text: this.name, pages: 1 });
  }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('createPdfReader', () => {
  it('runs at most `workers` workers at once; the rest wait and start in arrival order', async () => {
    const live: FakeWorker[] = [];
    const started: string[] = [];
    let most = 0;
    const reader = createPdfReader({ workers: 2 }, (job) => {
      const worker = new FakeWorker(new TextDecoder().decode(job.bytes));
      started.push(worker.name);
      live.push(worker);
      most = Math.max(most, live.length);
      worker.once('exit', () => live.splice(live.indexOf(worker), 1));
      return worker;
    });
    const names = ['p1', 'p2', 'p3', 'p4', 'p5'];
    const results = names.map((n) => reader.read(new TextEncoder().encode(n)));
    await tick();
    expect(started).toEqual(['p1', 'p2']);
    expect([reader.running, reader.waiting]).toEqual([2, 3]);
    // The second finishes first: the oldest waiter (p3) gets its slot.
    live[1].answer();
    await tick();
    expect(started).toEqual(['p1', 'p2', 'p3']);
    while (live.length) {
      live[live.length - 1].answer();
      await tick();
    }
    expect((await Promise.all(results)).map((r) => ('text' in r ? r.text : r.error))).toEqual(names);
    expect(started).toEqual(names);
    expect(most).toBe(2);
    expect([reader.running, reader.waiting]).toEqual([0, 0]);
  });

  it('takes the defaults for what is not set: 256 MB, 2 workers, 500 pages, 30 s', () => {
    expect(withDefaults({ maxPages: 10, maxMb: undefined })).toEqual({ maxMb: 256, workers: 2, maxPages: 10, timeoutMs: 30_000 });
  });
});
