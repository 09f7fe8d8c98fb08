/**
 * The sidebar's list: newest activity first, full-text search, cursor paging ("load more"),
 * rename, archive with undo, and the archived view with restore.
 * @module
 */
import type { Api } from './api.ts';
import { isApiError } from './errors.ts';
import type { Conversation } from './types.ts';

/**
 * When the title is read again after a first answer while a real model's title may follow (ms
 * from the answer's end): the model is asked once the answer is stored, for at most 10 s.
 */
const MODEL_TITLE_READS_MS = [1_000, 3_000, 6_000, 11_000];

export class ConversationList {
  #items = $state.raw<Conversation[]>([]);
  #next = $state<string | null>(null);
  #query = $state('');
  #archived = $state(false);
  #loading = $state(false);
  #error = $state<string | null>(null);
  #api: Api;
  #onUnauthorized?: () => void;
  #request = 0;

  constructor(api: Api, onUnauthorized?: () => void) {
    this.#api = api;
    this.#onUnauthorized = onUnauthorized;
  }

  get items(): Conversation[] {
    return this.#items;
  }
  get hasMore(): boolean {
    return this.#next !== null;
  }
  get query(): string {
    return this.#query;
  }
  get archived(): boolean {
    return this.#archived;
  }
  get loading(): boolean {
    return this.#loading;
  }
  get error(): string | null {
    return this.#error;
  }

  /** Loads the first page for the current query and view. */
  async refresh(): Promise<void> {
    const request = ++this.#request;
    this.#loading = true;
    try {
      const page = await this.#api.listConversations({ q: this.#query, archived: this.#archived, limit: 30 });
      if (request !== this.#request) return;
      this.#items = page.items;
      this.#next = page.next;
      this.#error = null;
    } catch (error) {
      if (request === this.#request) this.#failed(error);
    } finally {
      if (request === this.#request) this.#loading = false;
    }
  }

  async loadMore(): Promise<void> {
    if (!this.#next || this.#loading) return;
    const request = ++this.#request;
    this.#loading = true;
    try {
      const page = await this.#api.listConversations({ q: this.#query, archived: this.#archived, cursor: this.#next, limit: 30 });
      if (request !== this.#request) return;
      const seen = new Set(this.#items.map((c) => c.id));
      this.#items = [...this.#items, ...page.items.filter((c) => !seen.has(c.id))];
      this.#next = page.next;
    } catch (error) {
      if (request === this.#request) this.#failed(error);
    } finally {
      if (request === this.#request) this.#loading = false;
    }
  }

  search(query: string): Promise<void> {
    this.#query = query;
    return this.refresh();
  }

  showArchived(archived: boolean): Promise<void> {
    this.#archived = archived;
    return this.refresh();
  }

  /** Puts a conversation first (created, or just written to). */
  touch(conversation: Conversation | { id: string; title: string | null }): void {
    if (this.#archived) return;
    const existing = this.#items.find((c) => c.id === conversation.id);
    const now = new Date().toISOString();
    const merged = { created_at: now, archived: false, ...existing, ...conversation, updated_at: now } as Conversation;
    this.#items = [merged, ...this.#items.filter((c) => c.id !== conversation.id)];
  }

  /**
   * Reads one conversation's title back after its first answer, which names it
   * (server/engine/first-title.ts): the rule's title at once. With `modelTitle` (a real model
   * titles conversations: /api/agent/info `model_titles`) the model's may replace it a few seconds
   * later (asked after the answer, at most 10 s), so the title is read again at MODEL_TITLE_READS_MS
   * until it changes. Quiet on failure: the next list load shows it anyway.
   */
  async reloadTitle(id: string, options: { modelTitle?: boolean } = {}): Promise<void> {
    const first = await this.#readTitle(id);
    if (!options.modelTitle || first === null) return;
    let waited = 0;
    for (const at of MODEL_TITLE_READS_MS) {
      await new Promise((resolve) => setTimeout(resolve, at - waited));
      waited = at;
      // Renamed here (the server keeps the rename) or gone meanwhile: nothing more to learn.
      if (this.#titleOf(id) !== first) return;
      const title = await this.#readTitle(id);
      if (title !== first) return;
    }
  }

  /** Reads a title and shows it; null when it could not be read (deleted meanwhile, or offline). */
  async #readTitle(id: string): Promise<string | null> {
    const shown = this.#titleOf(id);
    try {
      const { title } = await this.#api.getConversation(id);
      // A rename in this tab while the read was out is newer than what the server said.
      if (this.#titleOf(id) === shown) this.#items = this.#items.map((c) => (c.id === id ? { ...c, title } : c));
      return title;
    } catch {
      return null;
    }
  }

  #titleOf(id: string): string | null | undefined {
    return this.#items.find((c) => c.id === id)?.title;
  }

  async rename(id: string, title: string): Promise<void> {
    const before = this.#items;
    this.#items = before.map((c) => (c.id === id ? { ...c, title } : c));
    try {
      await this.#api.renameConversation(id, title);
    } catch (error) {
      this.#items = before;
      this.#failed(error);
    }
  }

  /** Archives (soft delete); resolves to an undo that restores it in place. */
  async archive(id: string): Promise<(() => Promise<void>) | null> {
    const before = this.#items;
    const index = before.findIndex((c) => c.id === id);
    this.#items = before.filter((c) => c.id !== id);
    try {
      await this.#api.archiveConversation(id);
    } catch (error) {
      this.#items = before;
      this.#failed(error);
      return null;
    }
    const removed = before[index];
    return async () => {
      await this.#api.restoreConversation(id);
      if (removed && !this.#archived && !this.#items.some((c) => c.id === id)) {
        const items = [...this.#items];
        items.splice(Math.min(index, items.length), 0, { ...removed, archived: false });
        this.#items = items;
      }
    };
  }

  /** Restores from the archived view. */
  async restore(id: string): Promise<void> {
    const before = this.#items;
    this.#items = before.filter((c) => c.id !== id);
    try {
      await this.#api.restoreConversation(id);
    } catch (error) {
      this.#items = before;
      this.#failed(error);
    }
  }

  #failed(error: unknown): void {
    if (isApiError(error) && error.code === 'UNAUTHORIZED') return this.#onUnauthorized?.();
    this.#error = error instanceof Error ? error.message : String(error);
  }
}
