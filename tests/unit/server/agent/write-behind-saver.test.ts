import { emptyCheckpoint, MemorySaver, uuid6, type Checkpoint } from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import { describe, expect, it } from 'vitest';
import { WriteBehindSaver } from '../../../../server/agent/write-behind-saver.ts';

/** A MemorySaver whose puts wait for `open()` and can be made to fail; it records the order they start in. */
class GatedSaver extends MemorySaver {
  started: string[] = [];
  failNext: Error | null = null;
  #gate = Promise.withResolvers<void>();
  open(): void {
    this.#gate.resolve();
  }
  override async put(...args: Parameters<MemorySaver['put']>) {
    this.started.push(args[1].id);
    await this.#gate.promise;
    if (this.failNext) {
      const error = this.failNext;
      this.failNext = null;
      throw error;
    }
    return super.put(...args);
  }
}

const thread = (id: string): RunnableConfig => ({ configurable: { thread_id: id, checkpoint_ns: '' } });
const checkpoint = (): Checkpoint => ({ ...emptyCheckpoint(), id: uuid6(-1) });
const put = (saver: WriteBehindSaver, id: string, c = checkpoint()) => saver.put(thread(id), c, { source: 'loop', step: 0, parents: {} }, {});

describe('WriteBehindSaver', () => {
  it('answers a put at once with the config the inner saver would return; a read waits for the write', async () => {
    const inner = new GatedSaver();
    const saver = new WriteBehindSaver(inner);
    const c = checkpoint();
    expect(await put(saver, 't1', c)).toEqual({ configurable: { thread_id: 't1', checkpoint_ns: '', checkpoint_id: c.id } });
    expect(await inner.getTuple(thread('t1'))).toBeUndefined(); // not stored yet
    const read = saver.getTuple(thread('t1'));
    inner.open();
    expect((await read)?.checkpoint.id).toBe(c.id);
  });

  it('starts puts of a thread in order, each after the previous one', async () => {
    const inner = new GatedSaver();
    const saver = new WriteBehindSaver(inner);
    const [a, b] = [checkpoint(), checkpoint()];
    await put(saver, 't2', a);
    await put(saver, 't2', b);
    await Promise.resolve();
    expect(inner.started).toEqual([a.id]);
    inner.open();
    await saver.stored('t2');
    expect(inner.started).toEqual([a.id, b.id]);
  });

  it('reports a failed write once, to the next wait, skips the puts after it, then starts afresh', async () => {
    const inner = new GatedSaver();
    const saver = new WriteBehindSaver(inner);
    inner.failNext = new Error('database away');
    await put(saver, 't3');
    await put(saver, 't3'); // after a failed put: skipped (its parent is missing)
    inner.open();
    await expect(saver.stored('t3')).rejects.toThrow('database away');
    expect(inner.started).toHaveLength(1);
    await expect(saver.stored('t3')).resolves.toBeUndefined();
    const c = checkpoint();
    await put(saver, 't3', c);
    expect((await saver.getTuple(thread('t3')))?.checkpoint.id).toBe(c.id);
  });

  it('forgets a thread once its writes are stored, whether or not anyone waited for them', async () => {
    const inner = new GatedSaver();
    const saver = new WriteBehindSaver(inner);
    await put(saver, 't4');
    await put(saver, 't5');
    expect(saver.pendingThreads).toBe(2);
    inner.open();
    await saver.stored('t4'); // t5: nobody waits (a run aborted mid-write)
    await new Promise((r) => setImmediate(r));
    expect(saver.pendingThreads).toBe(0);
  });

  it('keeps threads apart: a slow thread does not hold up a read of another', async () => {
    const slow = new WriteBehindSaver(new GatedSaver());
    await put(slow, 'slow');
    await expect(slow.getTuple(thread('other'))).resolves.toBeUndefined();
  });
});
