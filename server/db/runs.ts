/**
 * The runs table: one row per turn, owned by the process that runs it and leased while it runs,
 * so a dead owner is noticed (its lease lapses). `(user_id, conversation_id, request_id)` is
 * unique (seed 001: the key's scope is the conversation), and so is `(user_id, request_id)` among
 * the runs that created their conversation (migration 144): a retried submit finds its run instead
 * of starting another, with or without a conversation.
 * @module
 */
import { isUniqueViolation, type Queryable } from './pool.ts';
import { ownerIsGone } from './processes.ts';

export type RunRowStatus = 'running' | 'done' | 'paused' | 'failed' | 'cancelled';

export interface Run {
  id: string;
  conversationId: string;
  userId: string;
  requestId: string;
  requestHash: string;
  owner: string;
  status: RunRowStatus;
  leaseExpiresAt: Date;
  startedAt: Date;
  finishedAt: Date | null;
  /** The run's submit named no conversation: it created this one. */
  openedConversation: boolean;
}

export interface RunRow {
  id: string;
  conversation_id: string;
  user_id: string;
  request_id: string;
  request_hash: string;
  owner: string;
  status: RunRowStatus;
  lease_expires_at: Date;
  started_at: Date;
  finished_at: Date | null;
  opened_conversation: boolean;
}

/** A `runs` row as the app sees it (also for statements of other modules that return one). */
export const toRun = (r: RunRow): Run => ({
  id: r.id,
  conversationId: r.conversation_id,
  userId: r.user_id,
  requestId: r.request_id,
  requestHash: r.request_hash,
  owner: r.owner,
  status: r.status,
  leaseExpiresAt: r.lease_expires_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  openedConversation: r.opened_conversation,
});

/** Inserts a running run; null when the user already has a run with this request id. */
export async function insertRun(
  q: Queryable,
  input: { id: string; conversationId: string; userId: string; requestId: string; requestHash: string; owner: string; leaseTtlS: number },
): Promise<Run | null> {
  try {
    const { rows } = await q.query<RunRow>(
      `INSERT INTO runs (id, conversation_id, user_id, request_id, request_hash, owner, lease_expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7)) RETURNING *`,
      [input.id, input.conversationId, input.userId, input.requestId, input.requestHash, input.owner, input.leaseTtlS],
    );
    return toRun(rows[0]);
  } catch (error) {
    if (isUniqueViolation(error)) return null;
    throw error;
  }
}

/**
 * The user's run of a request_id in `conversationId`; with `conversationId` null (a submit naming
 * no conversation), the one that created its conversation.
 */
export async function findRunByRequest(q: Queryable, input: { userId: string; requestId: string; conversationId: string | null }): Promise<Run | null> {
  const { rows } = await q.query<RunRow>(
    `SELECT * FROM runs WHERE user_id = $1 AND request_id = $2
       AND ${input.conversationId === null ? 'opened_conversation' : 'conversation_id = $3::uuid'}`,
    input.conversationId === null ? [input.userId, input.requestId] : [input.userId, input.requestId, input.conversationId],
  );
  return rows[0] ? toRun(rows[0]) : null;
}

/** The user's newest run of a request_id in any conversation (a Gradio session's retry, session-continuity.ts). */
export async function latestRunByRequest(q: Queryable, input: { userId: string; requestId: string }): Promise<Run | null> {
  const { rows } = await q.query<RunRow>('SELECT * FROM runs WHERE user_id = $1 AND request_id = $2 ORDER BY started_at DESC LIMIT 1', [input.userId, input.requestId]);
  return rows[0] ? toRun(rows[0]) : null;
}

export async function getRun(q: Queryable, id: string): Promise<Run | null> {
  const { rows } = await q.query<RunRow>('SELECT * FROM runs WHERE id = $1', [id]);
  return rows[0] ? toRun(rows[0]) : null;
}

/** Extends the lease of a run this owner still runs; false when it is no longer ours or running. */
export async function renewRunLease(q: Queryable, input: { id: string; owner: string; leaseTtlS: number }): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE runs SET lease_expires_at = now() + make_interval(secs => $3) WHERE id = $1 AND owner = $2 AND status = 'running'`,
    [input.id, input.owner, input.leaseTtlS],
  );
  return rowCount === 1;
}

/** Settles a running run; false when it was already settled (by its owner or by recovery). */
export async function finishRun(q: Queryable, input: { id: string; status: Exclude<RunRowStatus, 'running'> }): Promise<boolean> {
  const { rowCount } = await q.query(`UPDATE runs SET status = $2, finished_at = now() WHERE id = $1 AND status = 'running'`, [input.id, input.status]);
  return rowCount === 1;
}

/** Running runs whose owner is gone (db/processes.ts) or stopped renewing (its lease lapsed by the database clock). */
export async function listOrphanedRuns(q: Queryable): Promise<Run[]> {
  const { rows } = await q.query<RunRow>(
    `SELECT * FROM runs WHERE status = 'running' AND (lease_expires_at < now() OR ${ownerIsGone('runs.owner')}) ORDER BY started_at`,
  );
  return rows.map(toRun);
}
