/**
 * A turn on a new conversation starts with three rows: the conversation, its lease (streaming,
 * held by the run) and the run. They go in ONE statement (data-modifying CTEs; the foreign keys
 * are checked at its end): two round trips fewer before the first token of every new
 * conversation. The columns and defaults are those of `createConversation`, `tryTakeLease` and
 * `insertRun`, whose modules keep every other statement on these tables.
 * @module
 */
import type { Queryable } from './pool.ts';
import { toRun, type Run, type RunRow } from './runs.ts';

export interface OpenedTurn {
  conversationId: string;
  /** Null when the user already has a run with this request id (a concurrent retry won). */
  run: Run | null;
}

export async function openNewConversationTurn(
  q: Queryable,
  input: { userId: string; text: string; runId: string; requestId: string; requestHash: string; owner: string; leaseTtlS: number },
): Promise<OpenedTurn> {
  const { rows } = await q.query<{ new_conversation_id: string } & Partial<RunRow>>(
    `WITH t AS (SELECT airlock_derive_title($2) AS title),
     c AS (
       INSERT INTO conversations (id, user_id, title, title_auto)
       SELECT gen_random_uuid(), $1, coalesce(t.title, 'New conversation'), t.title IS NULL FROM t
       RETURNING id),
     l AS (
       INSERT INTO conversation_leases (conversation_id, holder, state, since, expires_at)
       SELECT id, $3::text, 'streaming', now(), now() + make_interval(secs => $7) FROM c
       RETURNING conversation_id),
     r AS (
       INSERT INTO runs (id, conversation_id, user_id, request_id, request_hash, owner, lease_expires_at)
       SELECT $3::uuid, conversation_id, $1, $4, $5, $6, now() + make_interval(secs => $7) FROM l
       ON CONFLICT (user_id, request_id) DO NOTHING
       RETURNING *)
     SELECT c.id AS new_conversation_id, r.* FROM c LEFT JOIN r ON true`,
    [input.userId, input.text, input.runId, input.requestId, input.requestHash, input.owner, input.leaseTtlS],
  );
  const row = rows[0]!;
  return { conversationId: row.new_conversation_id, run: row.id ? toRun(row as RunRow) : null };
}
