import { describe, expect, it } from 'vitest';
import { remainingMs, ServerClock } from '../../../../../src/lib/chat/server-clock.ts';

const header = (ms: number) => new Date(ms).toUTCString(); // whole seconds, as HTTP sends it

describe('ServerClock', () => {
  it('knows nothing before an answer (offset 0) and ignores answers without a usable Date', () => {
    const clock = new ServerClock(() => 5_000);
    clock.observe(null, 0, 10);
    clock.observe('not a date', 0, 10);
    expect(clock.offsetMs).toBe(0);
    expect(clock.now()).toBe(5_000);
  });

  it('a browser 90 s ahead: the offset is found to within half a second, and narrows with more answers', () => {
    const skew = 90_000;
    const server = 1_700_000_000_250; // the server's time when it answers
    const clock = new ServerClock(() => server + skew + 20);
    clock.observe(header(server), server + skew - 20, server + skew + 20);
    expect(Math.abs(clock.offsetMs + skew)).toBeLessThanOrEqual(520);
    // Answers stamped just after and just before a second boundary pin it down from both sides.
    const after = 1_700_000_003_010;
    clock.observe(header(after), after + skew - 15, after + skew + 15);
    const before = 1_700_000_005_990;
    clock.observe(header(before), before + skew - 15, before + skew + 15);
    expect(Math.abs(clock.offsetMs + skew)).toBeLessThanOrEqual(60);
    expect(Math.abs(clock.now() - (server + 20))).toBeLessThanOrEqual(60);
  });

  it('a clock that was set (no offset fits all answers) starts again from the newest answer', () => {
    const clock = new ServerClock(() => 0);
    clock.observe(header(10_000), 10_000, 10_100);
    expect(Math.abs(clock.offsetMs)).toBeLessThanOrEqual(500);
    clock.observe(header(10_000 + 3_600_000), 11_000, 11_100); // the server's clock moved an hour
    expect(Math.abs(clock.offsetMs - 3_599_000)).toBeLessThanOrEqual(600);
  });
});

describe('remainingMs', () => {
  const card = (expiresAt: string | null, timeoutS: number | null = 300) => ({ expiresAt, timeoutS });
  it('is the deadline against the server time, never above the timeout nor below 0', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(remainingMs(card('2026-01-01T00:04:00Z'), now)).toBe(240_000);
    // A server whose deadline reads further than its timeout (or a clock behind) still counts from the timeout.
    expect(remainingMs(card('2026-01-01T00:05:05Z'), now)).toBe(300_000);
    expect(remainingMs(card('2025-12-31T23:59:00Z'), now)).toBe(0);
    expect(remainingMs(card('2026-01-01T00:10:00Z', null), now)).toBe(600_000);
    expect(remainingMs(card(null), now)).toBeNull();
  });
});
