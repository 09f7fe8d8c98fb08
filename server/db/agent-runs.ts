/**
 * The agent_runs and agent_run_turns tables (migration 101): headless runs and the engine turns
 * each one is made of. Reads join the newest turn's engine run, whose status the run's status is
 * derived from (v1/run-status.ts).
 * @module
 */
/** A run's stored tool policy (the column's shape; agent/run-tool-allowlist.ts applies it). */
export type ToolPolicy = { mode: 'none' } | { mode: 'allowlist'; allowedTools: string[] };
import type { Queryable } from './pool.ts';
import type { RunRowStatus } from './runs.ts';

export type AgentRunMode = 'stream' | 'sync' | 'background';
export type AgentRunRowStatus = 'queued' | 'running' | 'cancelled' | 'failed';

export interface AgentRun {
  id: string;
  tenant: string;
  userId: string;
  username: string;
  userKey: string;
  sessionId: string | null;
  /** The caller's own session_id when it is not a conversation id (an alias; issue 24), echoed on every answer. */
  sessionRef: string | null;
  mode: AgentRunMode;
  rowStatus: AgentRunRowStatus;
  text: string;
  systemPrompt: string | null;
  toolPolicy: ToolPolicy | null;
  metadata: Record<string, unknown>;
  authProvider: string;
  attempts: number;
  cancelRequested: boolean;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: Date;
  startedAt: Date | null;
  /** The newest turn's engine run, if any turn started. */
  lastTurn: { id: string; status: RunRowStatus; finishedAt: Date | null } | null;
  turnIds: string[];
}

interface Row {
  id: string;
  tenant: string;
  user_id: string;
  username: string;
  user_key: string;
  session_id: string | null;
  session_ref: string | null;
  mode: AgentRunMode;
  status: AgentRunRowStatus;
  text: string;
  system_prompt: string | null;
  tool_policy: ToolPolicy | null;
  metadata: Record<string, unknown>;
  auth_provider: string;
  attempts: number;
  cancel_requested: boolean;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  started_at: Date | null;
  turn_id: string | null;
  turn_status: RunRowStatus | null;
  turn_finished_at: Date | null;
  turn_ids: string[] | null;
}

const toRun = (r: Row): AgentRun => ({
  id: r.id,
  tenant: r.tenant,
  userId: r.user_id,
  username: r.username,
  userKey: r.user_key,
  sessionId: r.session_id,
  sessionRef: r.session_ref ?? null,
  mode: r.mode,
  rowStatus: r.status,
  text: r.text,
  systemPrompt: r.system_prompt,
  toolPolicy: r.tool_policy,
  metadata: r.metadata,
  authProvider: r.auth_provider,
  attempts: r.attempts,
  cancelRequested: r.cancel_requested,
  errorCode: r.error_code,
  errorMessage: r.error_message,
  createdAt: r.created_at,
  startedAt: r.started_at,
  lastTurn: r.turn_id && r.turn_status ? { id: r.turn_id, status: r.turn_status, finishedAt: r.turn_finished_at } : null,
  turnIds: r.turn_ids ?? [],
});

/** Only turns whose engine run row exists count (a turn refused after linking never started). */
const SELECT = `
  SELECT a.*, last.id AS turn_id, last.status AS turn_status, last.finished_at AS turn_finished_at, turns.ids AS turn_ids
  FROM agent_runs a
  LEFT JOIN LATERAL (
    SELECT r.id, r.status, r.finished_at FROM agent_run_turns t JOIN runs r ON r.id = t.engine_run_id
    WHERE t.run_id = a.id ORDER BY t.linked_at DESC LIMIT 1
  ) last ON true
  LEFT JOIN LATERAL (
    SELECT array_agg(t.engine_run_id::text ORDER BY t.linked_at) AS ids FROM agent_run_turns t JOIN runs r ON r.id = t.engine_run_id
    WHERE t.run_id = a.id
  ) turns ON true`;

/** What a new run is given; the rest (attempts, turns, timestamps) the database keeps. */
export type NewAgentRun = Pick<
  AgentRun,
  'id' | 'tenant' | 'userId' | 'username' | 'userKey' | 'sessionId' | 'mode' | 'text' | 'systemPrompt' | 'toolPolicy' | 'metadata' | 'authProvider'
> & { status: AgentRunRowStatus; sessionRef?: string | null };

/** Inserts a run; false when the id is taken (metadata.run_id given twice). */
export async function insertAgentRun(q: Queryable, r: NewAgentRun): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO agent_runs (id, tenant, user_id, username, user_key, session_id, mode, status, text, system_prompt, tool_policy, metadata, auth_provider, started_at, session_ref)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, CASE WHEN $8 = 'running' THEN now() END, $14)
     ON CONFLICT (id) DO NOTHING`,
    [r.id, r.tenant, r.userId, r.username, r.userKey, r.sessionId, r.mode, r.status, r.text, r.systemPrompt, r.toolPolicy ? JSON.stringify(r.toolPolicy) : null, JSON.stringify(r.metadata), r.authProvider, r.sessionRef ?? null],
  );
  return rowCount === 1;
}

/** Background runs of `userId` waiting for the queue (status queued), for its per-user cap and fair order. */
export async function countQueuedRuns(q: Queryable, userId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM agent_runs WHERE user_id = $1 AND mode = 'background' AND status = 'queued'`, [userId]);
  return rows[0].n;
}

/** Serialises a user's background-run admissions until the transaction ends (the cap holds under a burst). */
export async function lockUserQueue(q: Queryable, userId: string): Promise<void> {
  await q.query(`SELECT pg_advisory_xact_lock(hashtext('agent-run-queue:' || $1::text))`, [userId]);
}

export async function getAgentRun(q: Queryable, id: string): Promise<AgentRun | null> {
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(id)) return null; // run ids are opaque strings (issue 24)
  const { rows } = await q.query<Row>(`${SELECT} WHERE a.id = $1`, [id]);
  return rows[0] ? toRun(rows[0]) : null;
}

/**
 * Runs of a tenant, newest first: every user's when `userId` is null (a role that sees the
 * tenant's work), else that user's. `before` is the id of the previous page's last row (the keyset
 * cursor is its (created_at, id), read here: a JS Date would drop created_at's microseconds).
 * `statuses`: only runs whose (row status, newest turn status) is one of these pairs (the derived
 * status of v1/run-status.ts `statusPairs`), filtered here, before the LIMIT, so a page is full.
 */
export async function listAgentRuns(
  q: Queryable,
  f: {
    tenant: string;
    userId: string | null;
    limit: number;
    mode?: AgentRunMode | null;
    before?: string | null;
    statuses?: Array<{ row: AgentRunRowStatus; turn: RunRowStatus | null }> | null;
  },
): Promise<AgentRun[]> {
  const { rows } = await q.query<Row>(
    `${SELECT} WHERE a.tenant = $1 AND ($2::uuid IS NULL OR a.user_id = $2) AND ($3::text IS NULL OR a.mode = $3)
       AND ($4::text IS NULL OR (a.created_at, a.id) < (SELECT b.created_at, b.id FROM agent_runs b WHERE b.id = $4))
       AND ($6::text[] IS NULL OR EXISTS (
         SELECT 1 FROM unnest($6::text[], $7::text[]) AS s(row_status, turn_status)
         WHERE s.row_status = a.status AND s.turn_status IS NOT DISTINCT FROM last.status))
     ORDER BY a.created_at DESC, a.id DESC LIMIT $5`,
    [f.tenant, f.userId, f.mode ?? null, f.before ?? null, f.limit, f.statuses?.map((s) => s.row) ?? null, f.statuses?.map((s) => s.turn) ?? null],
  );
  return rows.map(toRun);
}

/** Links an engine turn to its run. */
export async function linkTurn(q: Queryable, link: { engineRunId: string; runId: string; conversationId: string }): Promise<void> {
  await q.query('INSERT INTO agent_run_turns (engine_run_id, run_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [link.engineRunId, link.runId]);
  await q.query('UPDATE agent_runs SET session_id = $2 WHERE id = $1 AND session_id IS NULL', [link.runId, link.conversationId]);
}

/** The run of a conversation whose newest turn paused for approval (a decision resumes it). */
export async function pausedRunOfConversation(q: Queryable, conversationId: string): Promise<AgentRun | null> {
  const { rows } = await q.query<Row>(
    `${SELECT} WHERE a.session_id = $1 AND last.status = 'paused' AND a.status <> 'cancelled' ORDER BY a.created_at DESC LIMIT 1`,
    [conversationId],
  );
  return rows[0] ? toRun(rows[0]) : null;
}

/** The run an engine turn belongs to. */
export async function runOfTurn(q: Queryable, engineRunId: string): Promise<string | null> {
  const { rows } = await q.query<{ run_id: string }>('SELECT run_id FROM agent_run_turns WHERE engine_run_id = $1', [engineRunId]);
  return rows[0]?.run_id ?? null;
}

/** Moves the row's own status (queued -> running on an attempt, -> cancelled / failed). */
export async function setAgentRunStatus(
  q: Queryable,
  u: { id: string; status: AgentRunRowStatus; from?: AgentRunRowStatus[]; attempt?: boolean; error?: { code: string; message: string } },
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE agent_runs SET status = $2,
       attempts = attempts + CASE WHEN $4 THEN 1 ELSE 0 END,
       started_at = CASE WHEN $2 = 'running' THEN COALESCE(started_at, now()) ELSE started_at END,
       error_code = COALESCE($5, error_code), error_message = COALESCE($6, error_message)
     WHERE id = $1 AND ($3::text[] IS NULL OR status = ANY($3::text[]))`,
    [u.id, u.status, u.from ?? null, u.attempt ?? false, u.error?.code ?? null, u.error?.message ?? null],
  );
  return rowCount === 1;
}

export async function requestCancel(q: Queryable, id: string): Promise<void> {
  await q.query('UPDATE agent_runs SET cancel_requested = true WHERE id = $1', [id]);
}

export async function isCancelRequested(q: Queryable, id: string): Promise<boolean> {
  const { rows } = await q.query<{ cancel_requested: boolean }>('SELECT cancel_requested FROM agent_runs WHERE id = $1', [id]);
  return rows[0]?.cancel_requested ?? false;
}
