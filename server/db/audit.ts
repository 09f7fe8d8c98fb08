/**
 * The audit_log table: one row per tool call, allowed or refused, with both principals.
 * @module
 */
import type { Queryable } from './pool.ts';

export type AuditOutcome = 'success' | 'denied' | 'unauthorized' | 'invalid' | 'not_found' | 'conflict' | 'error' | 'replayed';

export interface AuditEntry {
  serviceActor: string | null;
  userId: string | null;
  username: string | null;
  userRole: string | null;
  operation: string;
  method: string;
  path: string;
  arguments: Record<string, unknown>;
  outcome: AuditOutcome;
  statusCode: number;
  errorCode: string | null;
  toolCallId: string | null;
  conversationId: string | null;
  durationMs: number | null;
  /** The gateway's tool policy decision for the call (server/policy); absent for calls no policy routed. */
  policyAction?: string | null;
  policyScope?: string | null;
  policyMatched?: boolean | null;
}

export interface AuditRecord extends AuditEntry {
  id: string;
  at: Date;
}

interface AuditRow {
  id: string;
  at: Date;
  service_actor: string | null;
  user_id: string | null;
  username: string | null;
  user_role: string | null;
  operation: string;
  method: string;
  path: string;
  arguments: Record<string, unknown>;
  outcome: AuditOutcome;
  status_code: number;
  error_code: string | null;
  tool_call_id: string | null;
  conversation_id: string | null;
  duration_ms: number | null;
  policy_action: string | null;
  policy_scope: string | null;
  policy_matched: boolean | null;
}

function toRecord(row: AuditRow): AuditRecord {
  return {
    id: String(row.id),
    at: row.at,
    serviceActor: row.service_actor,
    userId: row.user_id,
    username: row.username,
    userRole: row.user_role,
    operation: row.operation,
    method: row.method,
    path: row.path,
    arguments: row.arguments,
    outcome: row.outcome,
    statusCode: row.status_code,
    errorCode: row.error_code,
    toolCallId: row.tool_call_id,
    conversationId: row.conversation_id,
    durationMs: row.duration_ms,
    policyAction: row.policy_action,
    policyScope: row.policy_scope,
    policyMatched: row.policy_matched,
  };
}

/** Writes one audit row. */
export async function insertAudit(q: Queryable, e: AuditEntry): Promise<void> {
  await q.query(
    `INSERT INTO audit_log (service_actor, user_id, username, user_role, operation, method, path, arguments,
       outcome, status_code, error_code, tool_call_id, conversation_id, duration_ms, policy_action, policy_scope, policy_matched)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
    [
      e.serviceActor,
      e.userId,
      e.username,
      e.userRole,
      e.operation,
      e.method,
      e.path,
      JSON.stringify(e.arguments),
      e.outcome,
      e.statusCode,
      e.errorCode,
      e.toolCallId,
      e.conversationId,
      e.durationMs,
      e.policyAction ?? null,
      e.policyScope ?? null,
      e.policyMatched ?? null,
    ],
  );
}

/**
 * Writes many audit rows in one statement (one commit): the audit writer batches concurrent calls
 * so a busy api pays one WAL flush per batch instead of one per request.
 */
export async function insertAuditBatch(q: Queryable, entries: AuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const rows = entries.map((e) => ({
    service_actor: e.serviceActor,
    user_id: e.userId,
    username: e.username,
    user_role: e.userRole,
    operation: e.operation,
    method: e.method,
    path: e.path,
    arguments: e.arguments,
    outcome: e.outcome,
    status_code: e.statusCode,
    error_code: e.errorCode,
    tool_call_id: e.toolCallId,
    conversation_id: e.conversationId,
    duration_ms: e.durationMs,
    policy_action: e.policyAction ?? null,
    policy_scope: e.policyScope ?? null,
    policy_matched: e.policyMatched ?? null,
  }));
  await q.query(
    `INSERT INTO audit_log (service_actor, user_id, username, user_role, operation, method, path, arguments,
       outcome, status_code, error_code, tool_call_id, conversation_id, duration_ms, policy_action, policy_scope, policy_matched)
     SELECT service_actor, user_id, username, user_role, operation, method, path, arguments,
       outcome, status_code, error_code, tool_call_id, conversation_id, duration_ms, policy_action, policy_scope, policy_matched
     FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (service_actor text, user_id uuid, username text,
       user_role text, operation text, method text, path text, arguments jsonb, outcome text, status_code integer,
       error_code text, tool_call_id text, conversation_id text, duration_ms integer, policy_action text,
       policy_scope text, policy_matched boolean)) WITH ORDINALITY AS x
     ORDER BY x.ordinality`,
    [JSON.stringify(rows)],
  );
}

export interface AuditFilter {
  operation?: string;
  userId?: string;
  outcome?: AuditOutcome;
  toolCallId?: string;
  conversationId?: string;
  since?: Date;
  until?: Date;
}

/** Newest first, keyset-paged by id (`beforeId`). */
export async function listAudit(
  q: Queryable,
  input: AuditFilter & { beforeId?: string | null; limit: number },
): Promise<{ items: AuditRecord[]; nextBeforeId: string | null }> {
  const { rows } = await q.query<AuditRow>(
    `SELECT * FROM audit_log a
     WHERE ($1::text IS NULL OR a.operation = $1)
       AND ($2::uuid IS NULL OR a.user_id = $2)
       AND ($3::text IS NULL OR a.outcome = $3)
       AND ($4::text IS NULL OR a.tool_call_id = $4)
       AND ($5::text IS NULL OR a.conversation_id = $5)
       AND ($6::timestamptz IS NULL OR a.at >= $6)
       AND ($7::timestamptz IS NULL OR a.at < $7)
       AND ($8::bigint IS NULL OR a.id < $8)
     ORDER BY a.id DESC LIMIT $9`,
    [
      input.operation ?? null,
      input.userId ?? null,
      input.outcome ?? null,
      input.toolCallId ?? null,
      input.conversationId ?? null,
      input.since ?? null,
      input.until ?? null,
      input.beforeId ?? null,
      input.limit + 1,
    ],
  );
  const page = rows.slice(0, input.limit);
  const nextBeforeId = rows.length > input.limit ? String(page[page.length - 1].id) : null;
  return { items: page.map(toRecord), nextBeforeId };
}
