/**
 * The size budget for attached text: how many bytes each file may put into the prompt this turn,
 * and the head + tail cut of a text over its share. Pure; sizes are UTF-8 bytes, because that is
 * what the settings count and what the model endpoint receives.
 * @module
 */

/**
 * Each text's share of the turn budget, never more than `perFile`. Small texts take what they
 * need and leave the rest to the larger ones (water filling), so one big log does not starve a
 * small CSV next to it, nor the other way round.
 * @example allocateBudget([10, 500, 500], 400, 600) // [10, 295, 295]
 */
export function allocateBudget(sizes: readonly number[], perFile: number, perTurn: number): number[] {
  const shares = new Array<number>(sizes.length).fill(0);
  const order = sizes.map((size, index) => ({ size, index })).sort((a, b) => a.size - b.size);
  let left = Math.max(0, perTurn);
  order.forEach(({ size, index }, position) => {
    const fair = Math.floor(left / (order.length - position));
    shares[index] = Math.max(0, Math.min(size, perFile, fair));
    left -= shares[index];
  });
  return shares;
}

/** A text cut to a budget: its head, its tail, and how much was left out between them. */
export interface CutText {
  head: string;
  /** Empty when nothing was cut. */
  tail: string;
  omittedBytes: number;
  totalBytes: number;
}

/** Moves a cut position off UTF-8 continuation bytes (forward or backward), so no character is split. */
function boundary(bytes: Buffer, at: number, direction: 1 | -1): number {
  let i = at;
  while (i > 0 && i < bytes.length && (bytes[i] & 0xc0) === 0x80) i += direction;
  return i;
}

/**
 * The text whole when it fits, otherwise its first and last bytes (half each; the head ends and
 * the tail starts on a line break when one is close) so the model sees how a log starts and ends.
 */
export function cutToBudget(text: string, maxBytes: number): CutText {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { head: text, tail: '', omittedBytes: 0, totalBytes: bytes.length };
  const budget = Math.max(0, maxBytes);
  let headEnd = boundary(bytes, Math.floor(budget / 2), -1);
  let tailStart = boundary(bytes, bytes.length - (budget - headEnd), 1);
  // Prefer whole lines when a line break is within the last/first 10 % of each half.
  const slack = Math.floor(budget / 20);
  const lastBreak = bytes.lastIndexOf(0x0a, headEnd - 1);
  if (lastBreak >= 0 && headEnd - (lastBreak + 1) <= slack) headEnd = lastBreak + 1;
  const nextBreak = bytes.indexOf(0x0a, tailStart);
  if (nextBreak >= 0 && nextBreak + 1 - tailStart <= slack && nextBreak + 1 < bytes.length) tailStart = nextBreak + 1;
  return {
    head: bytes.subarray(0, headEnd).toString('utf8'),
    tail: bytes.subarray(tailStart).toString('utf8'),
    omittedBytes: tailStart - headEnd,
    totalBytes: bytes.length,
  };
}
