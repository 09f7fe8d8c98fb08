/**
 * The conversation_event_heads table: the last ledger seq of each conversation (the engine's
 * PgLedger increments it; readers such as history use it as the resume point of the stream).
 * @module
 */
import type { Queryable } from './pool.ts';

/** The last committed ledger seq of the conversation (0 when it has no events). */
export async function getEventHead(q: Queryable, conversationId: string): Promise<number> {
  const { rows } = await q.query<{ last_seq: string }>('SELECT last_seq FROM conversation_event_heads WHERE conversation_id = $1', [conversationId]);
  return rows[0] ? Number(rows[0].last_seq) : 0;
}
