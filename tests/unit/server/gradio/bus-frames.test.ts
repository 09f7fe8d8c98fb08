import { describe, expect, it } from 'vitest';
import { batchOps, INLINE_MAX, orphanCompletion } from '../../../../server/gradio/bus/frames.ts';
import type { BusOp } from '../../../../server/gradio/bus/mirror.ts';

const token = (i: number, size = 0): BusOp => ({ o: 'm', s: 's', e: 'e', f: `token ${i}${'x'.repeat(size)}`, t: 0 });

describe('batchOps: bus operations into NOTIFY payloads', () => {
  it.each([
    ['a few small frames', Array.from({ length: 50 }, (_, i) => token(i)), 1],
    ['many frames past the limit', Array.from({ length: 200 }, (_, i) => token(i, 50)), 5],
    ['one frame past the limit (spilled whole)', [token(0, 10_000)], 1],
    ['nothing', [], 0],
  ])('%s', (_name, ops, batches) => {
    const out = batchOps(ops);
    expect(out).toHaveLength(batches);
    expect(out.flatMap((b) => JSON.parse(b))).toEqual(ops); // nothing lost, order kept
    if (ops.every((o) => JSON.stringify(o).length < INLINE_MAX)) for (const b of out) expect(Buffer.byteLength(b)).toBeLessThanOrEqual(INLINE_MAX);
  });

  it('counts bytes, not characters (multi-byte text stays under the limit)', () => {
    const ops = Array.from({ length: 100 }, (_, i) => ({ o: 'm' as const, s: 's', e: 'e', f: `${i}${'é'.repeat(60)}`, t: 0 as const }));
    for (const b of batchOps(ops)) expect(Buffer.byteLength(b)).toBeLessThanOrEqual(INLINE_MAX);
  });
});

describe('orphanCompletion', () => {
  it('is a terminal error completion naming the event, with a retry hint by default', () => {
    const m = orphanCompletion('ev1');
    expect(m).toMatchObject({ eventId: 'ev1', terminal: true });
    const payload = JSON.parse(m.frame.replace(/^data: /, ''));
    expect(payload).toMatchObject({ msg: 'process_completed', event_id: 'ev1', success: false, title: 'Server stopped' });
    expect(payload.output.error).toMatch(/retry/);
    expect(JSON.parse(orphanCompletion('ev2', { title: 'SERVICE_UNAVAILABLE', message: 'm' }).frame.slice(6)).title).toBe('SERVICE_UNAVAILABLE');
  });
});
