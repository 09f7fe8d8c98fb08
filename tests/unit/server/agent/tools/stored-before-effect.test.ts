import { describe, expect, it } from 'vitest';
import { storedBeforeEffect, type ToolContext } from '../../../../../server/agent/tools/context.ts';

describe('storedBeforeEffect', () => {
  it.each([
    ['a new call waits for the run\'s checkpoints', undefined, 'c1', 1],
    ['a call of another resume waits too', new Set(['c2']), 'c1', 1],
    ['a resumed call does not (its step was stored at the pause)', new Set(['c1']), 'c1', 0],
  ])('%s', async (_label, resumedCalls, toolCallId, waits) => {
    let calls = 0;
    const ctx = { resumedCalls, checkpointed: async () => void calls++ } as unknown as ToolContext;
    await storedBeforeEffect(ctx, toolCallId);
    expect(calls).toBe(waits);
  });

  it('passes a failed write on: the call does not run', async () => {
    const ctx = { checkpointed: async () => Promise.reject(new Error('database away')) } as unknown as ToolContext;
    await expect(storedBeforeEffect(ctx, 'c1')).rejects.toThrow('database away');
  });
});
