import { describe, expect, it, vi } from 'vitest';
import type { TitleModel } from '../../../../server/agent/index.ts';
import type { Queryable } from '../../../../server/db/pool.ts';
import { ModelTitles, type FirstTitle } from '../../../../server/engine/first-title.ts';

const first: FirstTitle = { conversationId: '00000000-0000-4000-8000-000000000001', firstMessage: 'check health of all services', answer: 'All healthy.', title: 'Health of all services' };

/** ModelTitles over a model and a database that only record what they were asked. */
function titlesWith(model: TitleModel) {
  const query = vi.fn(async () => ({ rowCount: 1, rows: [] }));
  const warn = vi.fn();
  const titles = new ModelTitles({ pool: { query } as unknown as Queryable, model, log: { warn } });
  return { titles, query, warn };
}

describe('ModelTitles (a real model titles a conversation after its first answer)', () => {
  it("writes the cleaned reply over the rule's title, and only over it", async () => {
    const { titles, query } = titlesWith(async () => 'Title: "Service health check."');
    expect(await titles.ask(first)).toBe('written');
    expect(query).toHaveBeenCalledTimes(1);
    expect(query.mock.calls[0]).toEqual([expect.stringContaining('c.title = $3'), [first.conversationId, 'Service health check', first.title]]);
  });

  it("a reply that is the rule's title, or nothing, writes nothing; an error or an empty reply warns once", async () => {
    const same = titlesWith(async () => 'Health of all services.');
    expect(await same.titles.ask(first)).toBe('kept');
    expect(same.query).not.toHaveBeenCalled();
    for (const model of [async () => '  ', async () => Promise.reject(new Error('500 overloaded'))] satisfies TitleModel[]) {
      const failing = titlesWith(model);
      expect(await failing.titles.ask(first)).toBe('failed');
      expect(failing.query).not.toHaveBeenCalled();
      expect(failing.warn).toHaveBeenCalledTimes(1);
    }
  });

  it('close() aborts the asks in flight and waits for them: nothing is written after it, and nothing warns', async () => {
    let signalOf: AbortSignal | undefined;
    const { titles, query, warn } = titlesWith((_prompt, signal) => {
      signalOf = signal;
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    });
    const outcome = titles.ask(first);
    await titles.close();
    expect(signalOf?.aborted).toBe(true);
    expect(await outcome).toBe('failed');
    expect(query).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });
});
