/**
 * Following a conversation's ledger: committed events after a cursor, then each new commit as
 * the ledger wakes us (LISTEN/NOTIFY in PostgreSQL, so another process's writes arrive too).
 * A periodic re-read is only the fallback for a lost notification.
 * @module
 */
import type { LedgerEvent } from './events.ts';
import type { Ledger } from './ledger.ts';

const PAGE = 500;

export interface FollowOptions {
  after: number;
  signal?: AbortSignal;
  /** Stop after yielding an event for which this is true. */
  until?: (event: LedgerEvent) => boolean;
  /** Only these events are yielded (the cursor still moves past the others). */
  filter?: (event: LedgerEvent) => boolean;
  /** Re-read at least this often even without a notification (default 5 s). */
  fallbackMs?: number;
}

export async function* followLedger(ledger: Ledger, conversationId: string, options: FollowOptions): AsyncGenerator<LedgerEvent> {
  let wake: (() => void) | null = null;
  let woken = false;
  const unsubscribe = ledger.subscribe(conversationId, () => {
    woken = true;
    wake?.();
  });
  const onAbort = () => wake?.();
  options.signal?.addEventListener('abort', onAbort);
  try {
    let after = options.after;
    while (!options.signal?.aborted) {
      woken = false;
      const page = await ledger.read(conversationId, { after, limit: PAGE });
      for (const event of page) {
        after = event.seq;
        if (options.filter && !options.filter(event)) continue;
        yield event;
        if (options.until?.(event)) return;
      }
      if (page.length === PAGE || woken) continue;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, options.fallbackMs ?? 5_000).unref();
      });
      wake = null;
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}
