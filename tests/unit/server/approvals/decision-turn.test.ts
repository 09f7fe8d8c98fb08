import { describe, expect, it } from 'vitest';
import { retryWhileBusy } from '../../../../server/approvals/decision-turn.ts';
import { AirlockError } from '../../../../server/errors.ts';

describe('retryWhileBusy — the one busy-retry of a decision turn (v1 approvals, start-up recovery)', () => {
  it('tries again while the conversation is busy, and returns the first success', async () => {
    let calls = 0;
    const result = await retryWhileBusy(
      async () => {
        if (++calls < 3) throw new AirlockError('CONVERSATION_BUSY');
        return 'run';
      },
      { untilMs: Date.now() + 5_000, everyMs: 1 },
    );
    expect([result, calls]).toEqual(['run', 3]);
  });

  it('throws any other failure at once, and a busy one past its deadline', async () => {
    let calls = 0;
    await expect(retryWhileBusy(async () => (calls++, Promise.reject(new AirlockError('APPROVAL_NOT_FOUND'))), { untilMs: Date.now() + 5_000, everyMs: 1 })).rejects.toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
    expect(calls).toBe(1);
    await expect(retryWhileBusy(async () => Promise.reject(new AirlockError('CONVERSATION_BUSY')), { untilMs: Date.now(), everyMs: 1 })).rejects.toMatchObject({ code: 'CONVERSATION_BUSY' });
  });

  it('stops waiting when its signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const busy = retryWhileBusy(async () => Promise.reject(new AirlockError('CONVERSATION_BUSY')), { untilMs: Date.now() + 60_000, everyMs: 30_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(busy).rejects.toMatchObject({ code: 'CONVERSATION_BUSY' });
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
