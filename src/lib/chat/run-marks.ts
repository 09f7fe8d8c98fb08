/**
 * Which runs this tab started, across a reload of the same tab. The gateway keeps a run going
 * when its page goes away, so a reloaded tab finds it still open in the ledger; the mark tells
 * "the answer I asked for, still being written" (follow it live, with Stop) from another tab's or
 * browser's run (follow it read-only). sessionStorage is exactly that scope: it survives a reload
 * of the tab and is shared with no other tab.
 * @module
 */
import type { LedgerEventRef } from './api.ts';

export interface RunMarks {
  /** This tab submits a run on the conversation now. */
  set(conversationId: string): void;
  /** ms since this tab last submitted on the conversation, or null when it did not. */
  age(conversationId: string): number | null;
  clear(conversationId: string): void;
}

const PREFIX = 'airlock.run.';

/** Marks kept in `storage` (the tab's sessionStorage in the browser, a memory one in tests). */
export function runMarks(storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> | null, now: () => number = Date.now): RunMarks {
  return {
    set: (id) => storage?.setItem(PREFIX + id, String(now())),
    age: (id) => {
      const at = Number(storage?.getItem(PREFIX + id) ?? NaN);
      return Number.isFinite(at) ? Math.max(0, now() - at) : null;
    },
    clear: (id) => storage?.removeItem(PREFIX + id),
  };
}

/** The browser's: sessionStorage when it can be used (private modes may refuse it). */
export function tabRunMarks(): RunMarks {
  try {
    return runMarks(typeof sessionStorage === 'undefined' ? null : sessionStorage);
  } catch {
    return runMarks(null);
  }
}

/**
 * How long after this tab's submit a reload still expects that run to show in the ledger: the
 * reload may have raced the submit (the user message not committed yet when history was read).
 */
export const SUBMIT_LANDS_MS = 5_000;

/**
 * Ledger events after which no run is open: a run's end, and a branch switch `‹ 1/2 ›`, which is
 * an event of its own (its run id names no run, and no run.finished ever follows it; the server
 * refuses a switch while a run is open). Read as an open run, a switch locked the conversation:
 * "answering in another tab", no Edit, a running dot, until the next message (issue 37 item 1).
 */
const CLOSED: ReadonlySet<string> = new Set(['run.finished', 'branch.switched']);

/**
 * What a freshly loaded page does about the run the ledger shows at its history snapshot:
 * - `own`: a run is open and this tab started one here: follow it live, with Stop;
 * - `other`: a run is open that this tab did not start: follow it read-only;
 * - `wait`: nothing open yet, but this tab submitted moments ago: look again shortly;
 * - `none`: the history is the whole truth.
 */
export function resumeDecision({ last, markAge }: { last: LedgerEventRef | null; markAge: number | null }): 'own' | 'other' | 'wait' | 'none' {
  if (last && !CLOSED.has(last.kind)) return markAge !== null ? 'own' : 'other';
  return markAge !== null && markAge < SUBMIT_LANDS_MS ? 'wait' : 'none';
}
