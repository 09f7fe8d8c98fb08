import { describe, expect, it } from 'vitest';
import { FrameBatch } from '../../../../../src/lib/chat/frame-batch.ts';

describe('FrameBatch', () => {
  function setup() {
    const frames: (() => void)[] = [];
    const applied: number[][] = [];
    const batch = new FrameBatch<number>((items) => applied.push(items), (fn) => frames.push(fn));
    return { batch, frames, applied };
  }

  it('hands over everything pushed before the frame, once', () => {
    const { batch, frames, applied } = setup();
    for (let i = 1; i <= 5; i++) batch.push(i);
    expect(frames).toHaveLength(1);
    expect(applied).toEqual([]);
    frames[0]();
    expect(applied).toEqual([[1, 2, 3, 4, 5]]);
    batch.push(6);
    expect(frames).toHaveLength(2);
  });

  it('flush applies at once (before a card that must come after the tokens); the frame then finds nothing', () => {
    const { batch, frames, applied } = setup();
    batch.push(1);
    batch.flush();
    frames[0]();
    expect(applied).toEqual([[1]]);
  });

  it('clear drops what waits (a run that was abandoned)', () => {
    const { batch, frames, applied } = setup();
    batch.push(1);
    batch.clear();
    frames[0]();
    expect(applied).toEqual([]);
  });
});
