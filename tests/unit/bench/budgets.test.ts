import { describe, expect, it } from 'vitest';
import { judge } from '../../../bench/budgets.ts';

const budgets = {
  chat: { queries_submit: 14, submit_ratio_p50: 1.3 },
  capacity: { streams_reached: 800 },
  targets: { chat: { queries_submit: 14, submit_ratio_p50: 1.3 }, capacity: { streams_reached: 800 } },
};

describe('bench budgets', () => {
  it('a query count over budget is said and fails the bench', () => {
    const v = judge('chat', { queries_submit: 18 }, budgets);
    expect(v.lines).toEqual(['over budget: queries_submit 18 > 14']);
    expect(v.failed).toBe(true);
  });
  it('a ratio over budget is said but does not fail the bench (noisy on 2 cores)', () => {
    const v = judge('chat', { submit_ratio_p50: 2.516 }, budgets);
    expect(v.lines).toEqual(['over budget: submit_ratio_p50 2.52 > 1.30']);
    expect(v.failed).toBe(false);
  });
  it('streams reached is a floor', () => {
    expect(judge('capacity', { streams_reached: 400 }, budgets).lines).toEqual(['over budget: streams_reached 400 < 800']);
    expect(judge('capacity', { streams_reached: 800 }, budgets).lines[0]).toMatch(/^within budget/);
  });
  it('a figure with no budget is an error, not a silent pass', () => {
    expect(() => judge('chat', { queries_confirm: 3 }, budgets)).toThrow(/no chat.queries_confirm/);
  });
  it('the committed file has a budget and a target for every figure the benches report', () => {
    const names = { chat: ['submit_ratio_p50', 'confirm_ratio_p50', 'queries_submit', 'queries_confirm'], capacity: ['streams_reached'] };
    for (const [bench, figures] of Object.entries(names) as ['chat' | 'capacity', string[]][]) {
      expect(() => judge(bench, Object.fromEntries(figures.map((f) => [f, 0])))).not.toThrow();
    }
  });
});
