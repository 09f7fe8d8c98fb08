import { describe, expect, it } from 'vitest';
import { allocateBudget, cutToBudget } from '../../../../server/attachments/budget.ts';

describe('allocateBudget', () => {
  it.each([
    ['all fit', [10, 20], 100, 1000, [10, 20]],
    ['per-file cap', [500, 20], 100, 1000, [100, 20]],
    ['small files leave room to big ones', [10, 500, 500], 400, 600, [10, 295, 295]],
    ['the turn cap splits evenly', [1000, 1000, 1000], 1000, 900, [300, 300, 300]],
    ['order of input is kept', [500, 10], 400, 300, [290, 10]],
    ['nothing to share', [5, 5], 100, 0, [0, 0]],
    ['no files', [], 100, 100, []],
  ] as const)('%s', (_name, sizes, perFile, perTurn, expected) => {
    const shares = allocateBudget(sizes, perFile, perTurn);
    expect(shares).toEqual(expected);
    expect(shares.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(perTurn);
  });
});

describe('cutToBudget', () => {
  it('keeps a text that fits whole', () => {
    expect(cutToBudget('short', 10)).toEqual({ head: 'short', tail: '', omittedBytes: 0, totalBytes: 5 });
  });

  it('keeps head and tail of a long text and counts what it left out', () => {
    const text = 'A'.repeat(1000) + 'B'.repeat(1000);
    const cut = cutToBudget(text, 100);
    expect(cut.head).toBe('A'.repeat(50));
    expect(cut.tail).toBe('B'.repeat(50));
    expect(cut.omittedBytes).toBe(1900);
    expect(cut.totalBytes).toBe(2000);
  });

  it('never splits a multi-byte character and stays within budget', () => {
    const text = 'é'.repeat(500); // 1000 bytes
    for (const budget of [1, 2, 3, 99, 100, 101]) {
      const cut = cutToBudget(text, budget);
      expect(cut.head).not.toContain('\uFFFD');
      expect(cut.tail).not.toContain('\uFFFD');
      expect(Buffer.byteLength(cut.head) + Buffer.byteLength(cut.tail)).toBeLessThanOrEqual(budget);
      expect(Buffer.byteLength(cut.head) + Buffer.byteLength(cut.tail) + cut.omittedBytes).toBe(1000);
    }
  });

  it('ends the head and starts the tail on a line break when one is close', () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${String(i).padStart(3, '0')} ok`).join('\n'); // 14 bytes + \n
    const cut = cutToBudget(lines, 300);
    expect(cut.head.endsWith('\n')).toBe(true);
    expect(cut.tail.startsWith('line ')).toBe(true);
    expect(cut.tail.endsWith('line 099 ok')).toBe(true);
  });
});
