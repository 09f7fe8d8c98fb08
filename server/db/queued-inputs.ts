/**
 * The queued_inputs table (migration 145, issue 24 item 4): messages sent while their
 * conversation's agent runs, each waiting for its turn, in order. A row is its future run (run_id);
 * claiming it (claimQueuedInput) deletes it in the transaction that takes the conversation lease and
 * inserts that run row, so a queued message starts exactly once across replicas and restarts.
 * @module
 */
import { takeLeaseOnConflict } from './leases.ts';
import { withTransaction, type Pool } from './pool.ts';
import type { Queryable } from './pool.ts';
import { toRun, type Run, type RunRow } from './runs.ts';

export interface QueuedInput {
  runId: string;
  conversationId: string;
  userId: string;
  requestId: string;
  requestHash: string;
  /** The engine's turn input, as it stored it (never a token). */
  input: Record<string, unknown>;
  createdAt: Date;
  /** 1 for the next to start. */
  position: number;
}

interface QueuedRow {
  run_id: string;
  conversation_id: string;
  user_id: string;
  request_id: string;
  request_hash: string;
  input: Record<string, unknown>;
  created_at: Date;
  position: string | number;
}

const toQueued = (r: QueuedRow): QueuedInput => ({
  runId: r.run_id,
  conversationId: r.conversation_id,
  userId: r.user_id,
  requestId: r.request_id,
  requestHash: r.request_hash,
  input: r.input,
  createdAt: r.created_at,
  position: Number(r.position),
});

/** Each row with its position in its conversation's queue. */
const RANKED = `SELECT q.*, row_number() OVER (PARTITION BY q.conversation_id ORDER BY q.seq) AS position FROM queued_inputs q`;

export type Enqueued = { queued: QueuedInput } | { full: true } | { taken: true };

/**
 * Appends a message to its conversation's queue, unless `max` wait already (`full`) or the request id
 * is taken by a run or a queued message of this user here (`taken`: the caller replays it). The
 * conversation row is locked meanwhile, so concurrent sends cannot pass the cap together.
 */
export async function enqueueInput(
  pool: Pool,
  input: { runId: string; conversationId: string; userId: string; requestId: string; requestHash: string; input: Record<string, unknown>; max: number },
): Promise<Enqueued> {
  return withTransaction(pool, async (tx) => {
    await tx.query('SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE', [input.conversationId]);
    const { rows: seen } = await tx.query<{ taken: boolean; waiting: string }>(
      `SELECT EXISTS (SELECT 1 FROM runs WHERE user_id = $1 AND conversation_id = $2 AND request_id = $3)
           OR EXISTS (SELECT 1 FROM queued_inputs WHERE user_id = $1 AND conversation_id = $2 AND request_id = $3) AS taken,
              (SELECT count(*) FROM queued_inputs WHERE conversation_id = $2) AS waiting`,
      [input.userId, input.conversationId, input.requestId],
    );
    if (seen[0].taken) return { taken: true };
    if (Number(seen[0].waiting) >= input.max) return { full: true };
    const { rows } = await tx.query<QueuedRow>(
      `INSERT INTO queued_inputs (run_id, conversation_id, user_id, request_id, request_hash, input)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING *, $7::int AS position`,
      [input.runId, input.conversationId, input.userId, input.requestId, input.requestHash, JSON.stringify(input.input), Number(seen[0].waiting) + 1],
    );
    return { queued: toQueued(rows[0]) };
  });
}

/** The user's queued message of a request id in a conversation, with its position; null when none waits. */
export async function findQueuedInput(q: Queryable, input: { userId: string; conversationId: string; requestId: string }): Promise<QueuedInput | null> {
  const { rows } = await q.query<QueuedRow>(
    `SELECT * FROM (${RANKED} WHERE q.conversation_id = $2) r WHERE r.user_id = $1 AND r.request_id = $3`,
    [input.userId, input.conversationId, input.requestId],
  );
  return rows[0] ? toQueued(rows[0]) : null;
}

/** The position of a queued run; null when it is no longer queued (started or removed). */
export async function queuedPosition(q: Queryable, input: { conversationId: string; runId: string }): Promise<number | null> {
  const { rows } = await q.query<{ position: string }>(`SELECT position FROM (${RANKED} WHERE q.conversation_id = $1) r WHERE r.run_id = $2`, [input.conversationId, input.runId]);
  return rows[0] ? Number(rows[0].position) : null;
}

/** A conversation's queue, in order. */
export async function listQueuedInputs(q: Queryable, conversationId: string): Promise<QueuedInput[]> {
  const { rows } = await q.query<QueuedRow>(`${RANKED} WHERE q.conversation_id = $1 ORDER BY q.seq`, [conversationId]);
  return rows.map(toQueued);
}

/** Removes a message that has not started; false when none of this user's waits under that request id. */
export async function removeQueuedInput(q: Queryable, input: { userId: string; conversationId: string; requestId: string }): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM queued_inputs WHERE user_id = $1 AND conversation_id = $2 AND request_id = $3', [input.userId, input.conversationId, input.requestId]);
  return rowCount === 1;
}

/** Removes a queued run by its id (its own submitter cancelled it); false when it is no longer queued. */
export async function removeQueuedRun(q: Queryable, runId: string): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM queued_inputs WHERE run_id = $1', [runId]);
  return rowCount === 1;
}

/** Conversations with a queued message and no lease in force (recovery's sweep starts them). */
export async function listStalledQueues(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ conversation_id: string }>(
    `SELECT DISTINCT q.conversation_id FROM queued_inputs q
      WHERE NOT EXISTS (SELECT 1 FROM conversation_leases l WHERE l.conversation_id = q.conversation_id AND l.expires_at > now())`,
  );
  return rows.map((r) => r.conversation_id);
}

/**
 * Claims the conversation's next queued message, in one transaction: its row is deleted, the
 * conversation lease is taken for its run (never from a run that streams, nor from a pause: a
 * queued message never starts, and never denies, while an approval waits) and its run row is
 * inserted. Null when nothing waits, the conversation is busy or paused, or another process won.
 */
export async function claimQueuedInput(pool: Pool, input: { conversationId: string; owner: string; leaseTtlS: number }): Promise<{ queued: QueuedInput; run: Run } | null> {
  // Every turn's end asks; almost always nothing waits: one read, no transaction (issue 38). A
  // message queued after this read starts itself (TurnQueue.enqueue), as one the claim misses does.
  const waiting = await pool.query('SELECT 1 FROM queued_inputs WHERE conversation_id = $1 LIMIT 1', [input.conversationId]);
  if (!waiting.rowCount) return null;
  return withTransaction(pool, async (tx) => {
    // SKIP LOCKED: a head another process is claiming is theirs (their commit deletes it).
    const { rows } = await tx.query<QueuedRow>(
      `SELECT q.*, 1 AS position FROM queued_inputs q WHERE q.conversation_id = $1 ORDER BY q.seq LIMIT 1 FOR UPDATE SKIP LOCKED`,
      [input.conversationId],
    );
    const head = rows[0] ? toQueued(rows[0]) : null;
    if (!head) return null;
    const { rows: opened } = await tx.query<Partial<RunRow>>(
      `WITH free AS (
         SELECT $1::uuid AS id WHERE NOT EXISTS (SELECT 1 FROM approvals WHERE conversation_id = $1 AND status = 'pending')),
       l AS (
         INSERT INTO conversation_leases AS l (conversation_id, holder, state, since, expires_at, owner)
         SELECT id, $2::text, 'streaming', now(), now() + make_interval(secs => $5), $4 FROM free
         ${takeLeaseOnConflict('false')}
         RETURNING conversation_id),
       r AS (
         INSERT INTO runs (id, conversation_id, user_id, request_id, request_hash, owner, lease_expires_at)
         SELECT $2::uuid, conversation_id, $3, $6, $7, $4, now() + make_interval(secs => $5) FROM l
         ON CONFLICT DO NOTHING
         RETURNING *)
       SELECT r.* FROM r`,
      [input.conversationId, head.runId, head.userId, input.owner, input.leaseTtlS, head.requestId, head.requestHash],
    );
    if (!opened[0]?.id) {
      // Busy, paused, or (a rare race) the request id became a run meanwhile: only then is it dropped.
      const leased = await tx.query('DELETE FROM conversation_leases WHERE conversation_id = $1 AND holder = $2', [input.conversationId, head.runId]);
      if (leased.rowCount === 1) await tx.query('DELETE FROM queued_inputs WHERE run_id = $1', [head.runId]);
      return null;
    }
    await tx.query('DELETE FROM queued_inputs WHERE run_id = $1', [head.runId]);
    return { queued: head, run: toRun(opened[0] as RunRow) };
  });
}
