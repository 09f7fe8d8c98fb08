/**
 * The in-memory ledger: the contract's reference implementation and the engine's ledger in
 * tests that need no database. One process only.
 * @module
 */
import type { EventDraft, LedgerEvent } from './events.ts';
import { validateDraft } from './events.ts';
import { ANY_CONVERSATION, runIdOf, type CommitListener, type Ledger, type LedgerPage } from './ledger.ts';

export class MemoryLedger implements Ledger {
  readonly #events = new Map<string, LedgerEvent[]>();
  readonly #listeners = new Map<string, Set<CommitListener>>();

  async append(conversationId: string, drafts: EventDraft[]): Promise<LedgerEvent[]> {
    const valid = drafts.map(validateDraft); // all or none: validate before anything lands
    const log = this.#events.get(conversationId) ?? [];
    const createdAt = new Date().toISOString();
    const committed = valid.map((d, i) => ({ ...d, seq: log.length + i + 1, conversation_id: conversationId, run_id: runIdOf(d), created_at: createdAt }) as LedgerEvent);
    this.#events.set(conversationId, [...log, ...committed]);
    const head = log.length + committed.length;
    if (committed.length) {
      queueMicrotask(() => [conversationId, ANY_CONVERSATION].forEach((key) => this.#listeners.get(key)?.forEach((l) => l(head, conversationId))));
    }
    return structuredClone(committed);
  }

  async read(conversationId: string, { after, limit }: LedgerPage): Promise<LedgerEvent[]> {
    return structuredClone((this.#events.get(conversationId) ?? []).filter((e) => e.seq > after).slice(0, limit));
  }

  async readRun(conversationId: string, runId: string): Promise<LedgerEvent[]> {
    return structuredClone((this.#events.get(conversationId) ?? []).filter((e) => e.run_id === runId));
  }

  async head(conversationId: string): Promise<number> {
    return this.#events.get(conversationId)?.length ?? 0;
  }

  subscribe(conversationId: string, listener: CommitListener): () => void {
    let set = this.#listeners.get(conversationId);
    if (!set) this.#listeners.set(conversationId, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  async wake(conversationId: string): Promise<void> {
    queueMicrotask(() => this.#listeners.get(conversationId)?.forEach((l) => l(0)));
  }

  async close(): Promise<void> {
    this.#listeners.clear();
  }
}
