/**
 * The ledger interface: committed events per conversation with a gap-free seq. Two
 * implementations (memory-ledger.ts, pg-ledger.ts) pass one contract suite
 * (tests/unit/server/engine/ledger-contract.ts).
 * @module
 */
import type { Queryable } from '../db/index.ts';
import type { EventDraft, LedgerEvent } from './events.ts';

export interface LedgerPage {
  after: number;
  limit: number;
}

/**
 * Called after events of a conversation commit, with the newest seq (possibly another process's
 * write) and whose commit it was (absent: the notification connection was lost, re-read everything).
 */
export type CommitListener = (seq: number, conversationId?: string) => void;

export interface Ledger {
  /**
   * Validates every draft, then commits them all or none, numbered after the conversation's head.
   * `tx` joins the caller's transaction (PostgreSQL), so the events land with the state they describe.
   */
  append(conversationId: string, drafts: EventDraft[], options?: { tx?: Queryable }): Promise<LedgerEvent[]>;
  /** Events with seq > after, oldest first, at most `limit`. */
  read(conversationId: string, page: LedgerPage): Promise<LedgerEvent[]>;
  /** Every event of one run, oldest first. */
  readRun(conversationId: string, runId: string): Promise<LedgerEvent[]>;
  /** The last committed seq (0 when empty). */
  head(conversationId: string): Promise<number>;
  /** Wakes `listener` on commits to the conversation (`ANY_CONVERSATION`: to every one); returns the unsubscribe. */
  subscribe(conversationId: string, listener: CommitListener): () => void;
  /**
   * Wakes the conversation's subscribers in every process without a commit (seq 0: re-read from
   * your cursor): a change kept beside the ledger, such as a queued message removed (issue 24).
   */
  wake(conversationId: string): Promise<void>;
  close(): Promise<void>;
}

/** Subscribes to the commits of every conversation (the approvals inbox's live list, issue 26). */
export const ANY_CONVERSATION = '*';

/** Every draft must name a run (the column is derived from the payload). */
export function runIdOf(draft: EventDraft): string {
  return draft.payload.run_id;
}
