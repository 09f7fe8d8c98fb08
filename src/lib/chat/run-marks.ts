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
 * What a freshly loaded page does about the run the ledger shows at its history snapshot:
 * - `own`: a run is open and this tab started one here: follow it live, with Stop;
 * - `other`: a run is open that this tab did not start: follow it read-only;
 * - `wait`: nothing open yet, but this tab submitted moments ago: look again shortly;
 * - `none`: the history is the whole truth.
 */
export function resumeDecision({ last, markAge }: { last: LedgerEventRef | null; markAge: number | null }): 'own' | 'other' | 'wait' | 'none' {
  if (last && last.kind !== 'run.finished') return markAge !== null ? 'own' : 'other';
  return markAge !== null && markAge < SUBMIT_LANDS_MS ? 'wait' : 'none';
}
