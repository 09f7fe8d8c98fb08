import { describe, expect, it, vi } from 'vitest';
import type { Api } from '../../../../../src/lib/chat/api.ts';
import { ConversationList } from '../../../../../src/lib/chat/conversations.svelte.ts';
import { ApiError } from '../../../../../src/lib/chat/errors.ts';
import type { Conversation } from '../../../../../src/lib/chat/types.ts';

const conv = (id: string, archived = false): Conversation => ({ id, title: `T ${id}`, created_at: '', updated_at: '', archived });

function fakeList(total: number) {
  let rows = Array.from({ length: total }, (_, i) => conv(`c${i}`));
  const api = {
    listConversations: vi.fn(async ({ q = '', cursor = null, archived = false, limit = 30 }: { q?: string; cursor?: string | null; archived?: boolean; limit?: number }) => {
      const match = rows.filter((r) => r.archived === archived && r.title!.includes(q));
      const start = cursor ? Number(cursor) : 0;
      return { items: match.slice(start, start + limit), next: start + limit < match.length ? String(start + limit) : null };
    }),
    archiveConversation: vi.fn(async (id: string) => { rows = rows.map((r) => (r.id === id ? { ...r, archived: true } : r)); }),
    restoreConversation: vi.fn(async (id: string) => { rows = rows.map((r) => (r.id === id ? { ...r, archived: false } : r)); return conv(id); }),
    renameConversation: vi.fn(async (id: string, title: string) => ({ ...conv(id), title })),
  };
  return api as unknown as Api & typeof api;
}

describe('ConversationList', () => {
  it('loads the first page, then more', async () => {
    const list = new ConversationList(fakeList(45));
    await list.refresh();
    expect(list.items).toHaveLength(30);
    expect(list.hasMore).toBe(true);
    await list.loadMore();
    expect(list.items).toHaveLength(45);
    expect(list.hasMore).toBe(false);
  });

  it('searches', async () => {
    const list = new ConversationList(fakeList(45));
    await list.search('c4');
    expect(list.items.map((c) => c.id)).toEqual(['c4', 'c40', 'c41', 'c42', 'c43', 'c44']);
  });

  it('delete removes at once and undo restores in place', async () => {
    const api = fakeList(3);
    const list = new ConversationList(api);
    await list.refresh();
    const undo = await list.archive('c1');
    expect(list.items.map((c) => c.id)).toEqual(['c0', 'c2']);
    expect(api.archiveConversation).toHaveBeenCalledWith('c1');
    await undo!();
    expect(api.restoreConversation).toHaveBeenCalledWith('c1');
    expect(list.items.map((c) => c.id)).toEqual(['c0', 'c1', 'c2']);
  });

  it('archived view and restore', async () => {
    const api = fakeList(3);
    const list = new ConversationList(api);
    await list.refresh();
    await list.archive('c2');
    await list.showArchived(true);
    expect(list.items.map((c) => c.id)).toEqual(['c2']);
    await list.restore('c2');
    expect(list.items).toEqual([]);
    await list.showArchived(false);
    expect(list.items.map((c) => c.id)).toEqual(['c0', 'c1', 'c2']);
  });

  it('a failed delete puts the row back; UNAUTHORIZED goes to login', async () => {
    const api = fakeList(2);
    const onUnauthorized = vi.fn();
    const list = new ConversationList(api, onUnauthorized);
    await list.refresh();
    api.archiveConversation.mockRejectedValueOnce(new ApiError('INTERNAL', 'boom', 500));
    expect(await list.archive('c0')).toBeNull();
    expect(list.items.map((c) => c.id)).toEqual(['c0', 'c1']);
    expect(list.error).toBe('boom');
    api.listConversations.mockRejectedValueOnce(new ApiError('UNAUTHORIZED', 'expired', 401));
    await list.refresh();
    expect(onUnauthorized).toHaveBeenCalledOnce();
  });

  it('touch moves a conversation first and rename is optimistic', async () => {
    const list = new ConversationList(fakeList(3));
    await list.refresh();
    list.touch({ id: 'c2', title: 'T c2' });
    expect(list.items[0].id).toBe('c2');
    list.touch({ id: 'new', title: 'Fresh' });
    expect(list.items.map((c) => c.id)).toEqual(['new', 'c2', 'c0', 'c1']);
    await list.rename('c0', 'Renamed');
    expect(list.items.find((c) => c.id === 'c0')!.title).toBe('Renamed');
  });

  describe('reloadTitle after the first answer', () => {
    /** A list of c0..c2 whose server titles are `titles`, read in turn (the last one stays). */
    async function withServerTitles(titles: string[]) {
      const api = fakeList(3);
      const getConversation = vi.fn(async (id: string) => ({ ...conv(id), title: titles.length > 1 ? titles.shift()! : titles[0] }));
      const list = new ConversationList(Object.assign(api, { getConversation }));
      await list.refresh();
      return { list, getConversation, titleOf: () => list.items.find((c) => c.id === 'c0')!.title };
    }

    it("shows the rule's title once: no model title follows (offline model)", async () => {
      const { list, getConversation, titleOf } = await withServerTitles(['Health of all services']);
      await list.reloadTitle('c0');
      expect(titleOf()).toBe('Health of all services');
      expect(getConversation).toHaveBeenCalledTimes(1);
    });

    it("reads again until a real model's title replaces the rule's, then stops", async () => {
      vi.useFakeTimers();
      try {
        const { list, getConversation, titleOf } = await withServerTitles(['Health of all services', 'Health of all services', 'Service health check']);
        const done = list.reloadTitle('c0', { modelTitle: true });
        await vi.advanceTimersByTimeAsync(0);
        expect(titleOf()).toBe('Health of all services');
        await vi.advanceTimersByTimeAsync(3_000);
        expect(titleOf()).toBe('Service health check');
        await vi.advanceTimersByTimeAsync(20_000);
        await done;
        expect(getConversation).toHaveBeenCalledTimes(3);
      } finally {
        vi.useRealTimers();
      }
    });

    it('gives up after the model time cap, and never reads over a rename made here', async () => {
      vi.useFakeTimers();
      try {
        const capped = await withServerTitles(['Health of all services']);
        const done = capped.list.reloadTitle('c0', { modelTitle: true });
        await vi.advanceTimersByTimeAsync(60_000);
        await done;
        expect(capped.getConversation).toHaveBeenCalledTimes(5); // at once, then at 1, 3, 6 and 11 s

        const renamed = await withServerTitles(['Health of all services']);
        const reading = renamed.list.reloadTitle('c0', { modelTitle: true });
        await vi.advanceTimersByTimeAsync(0);
        await renamed.list.rename('c0', 'Mine');
        await vi.advanceTimersByTimeAsync(60_000);
        await reading;
        expect(renamed.titleOf()).toBe('Mine');
        expect(renamed.getConversation).toHaveBeenCalledTimes(1);
      } finally {
        vi.useRealTimers();
      }
    });
  });
});
