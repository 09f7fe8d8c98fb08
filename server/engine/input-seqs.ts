/**
 * What a turn's ledger says about its input (seed 001, issue 24 item 4):
 * - `assistant.message.input_seqs`: the `user.message` seqs the answer was given for, so the log
 *   itself tells which input is answered. A turn answers its own message; a turn with none of its
 *   own (a decision's resume) goes on answering the conversation's latest message.
 * - `user.message`'s optional fields: `client_message_id` (the client's own id, AG-UI) and
 *   `delivery: "queue"` (a message written for the next turn: an edge write, a queued message).
 * Kept out of turn.ts, which only stamps its drafts here.
 * @module
 */
import type { Queryable } from '../db/index.ts';
import type { EventDraft, LedgerEvent } from './events.ts';
import type { TurnInput } from './types.ts';

/** The optional fields of a turn's user.message. */
export function userMessageExtras(input: Pick<TurnInput, 'clientMessageId' | 'delivery'>): { client_message_id?: string; delivery?: 'queue' } {
  return { ...(input.clientMessageId ? { client_message_id: input.clientMessageId } : {}), ...(input.delivery ? { delivery: input.delivery } : {}) };
}

/** The input seqs of one turn: stamps its assistant.message drafts, learns from its commits. */
export class InputSeqs {
  #seqs: number[] | null = null;
  readonly #conversationId: string;

  constructor(conversationId: string) {
    this.#conversationId = conversationId;
  }

  /** The drafts with `input_seqs` on each assistant.message (read in `tx` when the turn has no message of its own yet). */
  async stamp(tx: Queryable, drafts: EventDraft[]): Promise<EventDraft[]> {
    if (!drafts.some((d) => d.kind === 'assistant.message')) return drafts;
    const seqs = this.#seqs ?? (await latestUserMessage(tx, this.#conversationId));
    return drafts.map((d) => (d.kind === 'assistant.message' ? { ...d, payload: { ...d.payload, input_seqs: seqs } } : d));
  }

  /** The turn answers this user.message, having none of its own (a regenerate, issue 29). */
  answering(seq: number): void {
    this.#seqs = [seq];
  }

  /** Records the turn's own user.message once committed; returns the events as they are. */
  track(committed: LedgerEvent[]): LedgerEvent[] {
    const own = committed.filter((e) => e.kind === 'user.message').map((e) => e.seq);
    if (own.length > 0) this.#seqs = own;
    return committed;
  }
}

async function latestUserMessage(tx: Queryable, conversationId: string): Promise<number[]> {
  const { rows } = await tx.query<{ seq: string | number }>(
    `SELECT seq FROM conversation_events WHERE conversation_id = $1 AND kind = 'user.message' ORDER BY seq DESC LIMIT 1`,
    [conversationId],
  );
  return rows.map((r) => Number(r.seq));
}
