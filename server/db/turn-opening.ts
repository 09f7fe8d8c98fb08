/**
 * A turn starts with rows that go in ONE statement (data-modifying CTEs; the foreign keys are
 * checked at its end), because they sit before its first token:
 * - a new conversation: the conversation, its lease (streaming, held by the run) and the run;
 * - an existing one: the owner check, the lease (taking over a paused run's) and the run.
 * The columns and defaults are those of `createConversation`, `tryTakeLease` and `insertRun`,
 * whose modules keep every other statement on these tables.
 * @module
 */
import { isUuid } from './conversations.ts';
import { takeLeaseOnConflict } from './leases.ts';
import type { BranchAt } from './branches.ts';
import type { Queryable } from './pool.ts';
import { toRun, type Run, type RunRow } from './runs.ts';

/**
 * The run row's insert from the lease CTE `l`: nothing when the lease was not taken, or when the
 * request_id is taken (in this conversation, or, for a run that opens one, among opening runs).
 */
const insertRunFromLease = (openedConversation: boolean) => `
       INSERT INTO runs (id, conversation_id, user_id, request_id, request_hash, owner, lease_expires_at, opened_conversation)
       SELECT $3::uuid, conversation_id, $1, $4, $5, $6, now() + make_interval(secs => $7), ${openedConversation} FROM l
       ON CONFLICT DO NOTHING
       RETURNING *`;

export interface OpenedTurn {
  conversationId: string;
  /** Null when the user already opened a conversation with this request id (a concurrent retry won). */
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
       INSERT INTO conversation_leases (conversation_id, holder, state, since, expires_at, owner)
       SELECT id, $3::text, 'streaming', now(), now() + make_interval(secs => $7), $6 FROM c
       RETURNING conversation_id),
     r AS (${insertRunFromLease(true)})
     SELECT c.id AS new_conversation_id, r.* FROM c LEFT JOIN r ON true`,
    [input.userId, input.text, input.runId, input.requestId, input.requestHash, input.owner, input.leaseTtlS],
  );
  const row = rows[0]!;
  return { conversationId: row.new_conversation_id, run: row.id ? toRun(row as RunRow) : null };
}

/**
 * Messages queued in a conversation go first (issue 24 item 4): a new turn takes its lease only
 * when none waits, or when a run paused for approval holds it (a new message supersedes the
 * pause, and decisions answer it; the queue waits for the decision's resume).
 */
const QUEUE_EMPTY_OR_PAUSED = `(NOT EXISTS (SELECT 1 FROM queued_inputs qi WHERE qi.conversation_id = c.id)
           OR EXISTS (SELECT 1 FROM conversation_leases pl WHERE pl.conversation_id = c.id AND pl.state = 'awaiting_confirmation' AND pl.expires_at > now()))`;

export interface OpenedExistingTurn {
  /** False when the conversation does not exist or is not the user's (nothing was written). */
  found: boolean;
  /** False when another run streams in it, or messages queued in it wait (nothing was written). */
  leased: boolean;
  /** Null when not leased, or when the user already has a run with this request id here (a concurrent retry won). */
  run: Run | null;
  /** Its branches as the turn found them (issue 29); absent when not found. */
  branchAt?: BranchAt;
}

/** The owner check, the lease (taking over a paused run's) and the run row of a turn on an existing conversation. */
export async function openExistingConversationTurn(
  q: Queryable,
  input: { userId: string; conversationId: string; runId: string; requestId: string; requestHash: string; owner: string; leaseTtlS: number },
): Promise<OpenedExistingTurn> {
  if (!isUuid(input.conversationId)) return { found: false, leased: false, run: null };
  const { rows } = await q.query<{ found: boolean; leased: boolean; active_branch: number | null; thread_branch: number | null; forked: boolean } & Partial<RunRow>>(
    `WITH c AS (SELECT id, active_branch, thread_branch FROM conversations WHERE id = $2::uuid AND user_id = $1),
     l AS (
       INSERT INTO conversation_leases AS l (conversation_id, holder, state, since, expires_at, owner)
       SELECT id, $3::text, 'streaming', now(), now() + make_interval(secs => $7), $6 FROM c
        WHERE ${QUEUE_EMPTY_OR_PAUSED}
       ${takeLeaseOnConflict('true')}
       RETURNING conversation_id),
     r AS (${insertRunFromLease(false)})
     SELECT EXISTS (SELECT 1 FROM c) AS found, EXISTS (SELECT 1 FROM l) AS leased,
            (SELECT active_branch FROM c) AS active_branch, (SELECT thread_branch FROM c) AS thread_branch,
            EXISTS (SELECT 1 FROM conversation_branches b WHERE b.conversation_id = $2::uuid) AS forked, r.*
       FROM (SELECT 1) AS one LEFT JOIN r ON true`,
    [input.userId, input.conversationId, input.runId, input.requestId, input.requestHash, input.owner, input.leaseTtlS],
  );
  const row = rows[0]!;
  const branchAt = row.active_branch === null ? undefined : { active: row.active_branch, thread: row.thread_branch ?? 0, forked: row.forked };
  return { found: row.found, leased: row.leased, run: row.id ? toRun(row as RunRow) : null, branchAt };
}
