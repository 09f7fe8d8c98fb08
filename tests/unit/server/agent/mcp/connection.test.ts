import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../../../../server/agent/mcp/connection.ts';

describe('retryDelayMs — backoff for a down server', () => {
  const rows: Array<[attempt: number, ms: number]> = [
    [0, 1000],
    [1, 2000],
    [2, 4000],
    [4, 16_000],
    [5, 30_000],
    [20, 30_000],
    [-1, 1000],
  ];
  it.each(rows)('attempt %d waits %d ms', (attempt, ms) => {
    expect(retryDelayMs(attempt)).toBe(ms);
  });
});
