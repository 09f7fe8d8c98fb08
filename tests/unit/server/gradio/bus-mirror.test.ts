/**
 * The bus state machine every replica applies in NOTIFY order (server/gradio/bus/mirror.ts), from
 * tables: which frames reach a stream here, what stays buffered, what is dropped.
 */
import { describe, expect, it } from 'vitest';
import { BusMirror, type BusOp } from '../../../../server/gradio/bus/mirror.ts';

const e = (id: string): BusOp => ({ o: 'e', s: 's', e: id });
const m = (id: string, f: string, terminal = false): BusOp => ({ o: 'm', s: 's', e: id, f, t: terminal ? 1 : 0 });
const a = (k: string): BusOp => ({ o: 'a', s: 's', k });
const d = (k: string): BusOp => ({ o: 'd', s: 's', k });

type Step = BusOp | 'attach-here' | 'detach-here';

function run(steps: Step[]) {
  const mirror = new BusMirror();
  const got: string[] = [];
  let replaced = 0;
  const dropped: string[] = [];
  for (const step of steps) {
    if (step === 'attach-here') mirror.attachHere('s', 'me:1', (msg, pending) => got.push(`${msg.frame}/${pending}`), () => replaced++);
    else if (step === 'detach-here') mirror.detachHere('s', 'me:1');
    else dropped.push(...mirror.apply(step));
  }
  return { got, replaced, dropped, pending: mirror.pending('s'), attached: mirror.attached('s'), size: mirror.size };
}

describe('BusMirror', () => {
  it.each<[string, Step[], Partial<ReturnType<typeof run>>]>([
    ['buffers until the stream attaches here, then delivers in order', [e('1'), m('1', 'a'), 'attach-here', m('1', 'b', true)], { got: ['a/1', 'b/0'], pending: 0 }],
    ['a stream elsewhere: nothing buffered here, the pending count still moves', [e('1'), a('other:1'), m('1', 'a'), m('1', 'b', true)], { got: [], pending: 0, attached: true }],
    ['attached elsewhere after frames: the buffer is theirs, dropped here', [e('1'), m('1', 'a'), a('other:1'), d('other:1'), 'attach-here'], { got: [], attached: true }],
    ['a stream elsewhere replaces the one here', [e('1'), 'attach-here', a('other:1'), m('1', 'x')], { got: [], replaced: 1, attached: true }],
    ['a stale detach of an older stream changes nothing', [e('1'), a('other:1'), a('other:2'), d('other:1')], { attached: true }],
    ['a finished session is forgotten when its stream detaches', [e('1'), 'attach-here', m('1', 'z', true), 'detach-here'], { size: 0, got: ['z/0'] }],
    ['forget drops an unattached session and reports it', [e('1'), m('1', 'a'), { o: 'x', s: 's' }], { size: 0, dropped: ['s'] }],
    ['forget leaves a session streaming here', [e('1'), 'attach-here', { o: 'x', s: 's' }], { size: 1, dropped: [] }],
    ['a dead replica takes its streams with it', [e('1'), a('dead:1'), { o: 'r', r: 'dead' }], { size: 0, dropped: ['s'] }],
    ["a dead replica leaves others' streams", [e('1'), a('alive:1'), { o: 'r', r: 'dead' }], { size: 1, dropped: [] }],
    ['frames of an unknown session are ignored', [m('1', 'a')], { size: 0 }],
  ])('%s', (_name, steps, expected) => {
    expect(run(steps)).toMatchObject(expected);
  });

  it('adopts a session it never saw joined (a replica started later)', () => {
    const mirror = new BusMirror();
    mirror.adopt('s', ['1', '2']);
    expect(mirror.pending('s')).toBe(2);
    mirror.apply(e('1')); // its join's notification arriving late changes nothing
    expect(mirror.pending('s')).toBe(2);
  });
});
