/**
 * The audit_log table: one row per tool call, allowed or refused, with both principals. Every row
 * is appended to its tenant's hash chain (server/audit/chain.ts) in the transaction that writes it.
 * @module
 */
import { rowHash, type ChainHead, type ChainRow } from '../audit/chain.ts';
import { withTransaction, type Pool, type PoolClient, type Queryable } from './pool.ts';

export type AuditOutcome = 'success' | 'denied' | 'unauthorized' | 'invalid' | 'not_found' | 'conflict' | 'error' | 'replayed' | 'preview';

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
  /** Whose request this row is about when the actor is not a user (an expiry): picks the row's tenant. */
  requesterId?: string | null;
  /** The row's chain when neither actor nor requester picks it (a change to a user goes to that user's tenant). */
  tenant?: string;
}

export interface AuditRecord extends AuditEntry {
  id: string;
  at: Date;
}

/** A stored audit row as read back: the chain's columns (audit/chain.ts), typed as the database gives them. */
interface AuditRow extends Omit<ChainRow, 'tenant' | 'at' | 'arguments' | 'outcome' | 'prev_hash' | 'hash'> {
  at: Date;
  arguments: Record<string, unknown>;
  outcome: AuditOutcome;
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

/** Writes one audit row (chained: see appendAudit). */
export async function insertAudit(db: Queryable, e: AuditEntry): Promise<void> {
  await appendAudit(db, [e]);
}

/**
 * Writes many audit rows in one statement (one commit): the audit writer batches concurrent calls
 * so a busy api pays one WAL flush per batch instead of one per request.
 */
export async function insertAuditBatch(db: Queryable, entries: AuditEntry[]): Promise<void> {
  await appendAudit(db, entries);
}

export interface AppendedAudit {
  id: string;
  tenant: string;
  hash: string;
}

/**
 * Appends rows to their tenants' chains (server/audit/chain.ts). A pool gets a transaction of its
 * own; a client is the caller's transaction (the row commits with what it records). Each tenant's
 * head row is locked (tenants in sorted order, so two batches never deadlock) before its rows draw
 * their ids, so within a tenant id order is chain order, across every replica.
 */
export async function appendAudit(db: Queryable, entries: AuditEntry[]): Promise<AppendedAudit[]> {
  if (entries.length === 0) return [];
  if (!isClient(db)) return withTransaction(db as Pool, (client) => appendAudit(client, entries));
  const tenantOf = await tenantsOf(db, entries);
  const at = new Date().toISOString();
  const rows: ChainRow[] = [];
  const heads: ChainHead[] = [];
  for (const tenant of [...new Set(entries.map(tenantOf))].sort()) {
    const mine = entries.filter((e) => tenantOf(e) === tenant);
    const { rows: [head] } = await db.query<{ hash: string; ids: string[] }>(
      `INSERT INTO audit_chain_heads (tenant, last_id, hash)
       SELECT $1, NULL, 'genesis:' || g.last_id FROM audit_chain_genesis g
       ON CONFLICT (tenant) DO UPDATE SET tenant = EXCLUDED.tenant
       RETURNING hash, (SELECT array_agg(nextval('audit_log_id_seq')::text) FROM generate_series(1, $2::int)) AS ids`,
      [tenant, mine.length],
    );
    const ids = head.ids.map(BigInt).sort((a, b) => (a < b ? -1 : 1)).map(String);
    let prev = head.hash;
    mine.forEach((e, i) => {
      const row = { ...chainColumns(e), id: ids[i], tenant, at, prev_hash: prev };
      const hash = rowHash(row);
      rows.push({ ...row, hash });
      prev = hash;
    });
    heads.push({ tenant, last_id: ids[ids.length - 1], hash: prev });
  }
  await db.query(
    `WITH ins AS (
       INSERT INTO audit_log (id, tenant, at, service_actor, user_id, username, user_role, operation, method, path, arguments,
         outcome, status_code, error_code, tool_call_id, conversation_id, duration_ms, policy_action, policy_scope, policy_matched,
         prev_hash, hash)
       SELECT id, tenant, at, service_actor, user_id, username, user_role, operation, method, path, arguments,
         outcome, status_code, error_code, tool_call_id, conversation_id, duration_ms, policy_action, policy_scope, policy_matched,
         prev_hash, hash
       FROM jsonb_to_recordset($1::jsonb) AS x (id bigint, tenant text, at timestamptz, service_actor text, user_id uuid, username text,
         user_role text, operation text, method text, path text, arguments jsonb, outcome text, status_code integer,
         error_code text, tool_call_id text, conversation_id text, duration_ms integer, policy_action text,
         policy_scope text, policy_matched boolean, prev_hash text, hash text)
       RETURNING 1
     )
     UPDATE audit_chain_heads h SET last_id = x.last_id, hash = x.hash
     FROM jsonb_to_recordset($2::jsonb) AS x (tenant text, last_id bigint, hash text)
     WHERE h.tenant = x.tenant`,
    [JSON.stringify(rows), JSON.stringify(heads)],
  );
  return rows.map((r) => ({ id: r.id, tenant: r.tenant!, hash: r.hash! }));
}

/** A checked-out client is a transaction's (the caller's); anything else is a pool. */
function isClient(db: Queryable): db is PoolClient {
  return typeof (db as PoolClient).release === 'function';
}

/** The tenant of each row: the one it names, else its actor's, else its requester's, else `_system`. */
async function tenantsOf(db: Queryable, entries: AuditEntry[]): Promise<(e: AuditEntry) => string> {
  const ids = [...new Set(entries.flatMap((e) => [e.userId, e.requesterId]).filter((id): id is string => !!id))];
  const known = new Map<string, string>();
  if (ids.length > 0) {
    const { rows } = await db.query<{ id: string; tenant: string }>(`SELECT id::text, tenant FROM users WHERE id::text = ANY($1::text[])`, [ids]);
    for (const r of rows) known.set(r.id, r.tenant);
  }
  return (e) => e.tenant || (e.userId && known.get(e.userId)) || (e.requesterId && known.get(e.requesterId)) || SYSTEM_TENANT;
}

/** The tenant of rows with neither an actor nor a requester a user of ours. */
export const SYSTEM_TENANT = '_system';

/** An entry's hashed columns as stored: arguments as jsonb will give them back. */
function chainColumns(e: AuditEntry): Omit<ChainRow, 'id' | 'tenant' | 'at' | 'prev_hash' | 'hash'> {
  return {
    service_actor: e.serviceActor,
    user_id: e.userId?.toLowerCase() ?? null,
    username: e.username,
    user_role: e.userRole,
    operation: e.operation,
    method: e.method,
    path: e.path,
    arguments: JSON.parse(JSON.stringify(e.arguments)),
    outcome: e.outcome,
    status_code: e.statusCode,
    error_code: e.errorCode,
    tool_call_id: e.toolCallId,
    conversation_id: e.conversationId,
    duration_ms: e.durationMs,
    policy_action: e.policyAction ?? null,
    policy_scope: e.policyScope ?? null,
    policy_matched: e.policyMatched ?? null,
  };
}

/** The last id written before the chain began (every tenant's first row links to `genesis:<it>`). */
export async function auditChainGenesis(q: Queryable): Promise<string> {
  return (await q.query<{ last_id: string }>('SELECT last_id::text FROM audit_chain_genesis')).rows[0].last_id;
}

/** Each tenant's chain head. */
export async function auditChainHeads(q: Queryable): Promise<ChainHead[]> {
  return (await q.query<ChainHead>('SELECT tenant, last_id::text, hash FROM audit_chain_heads ORDER BY tenant')).rows;
}

/** Up to `limit` rows with ids in [from, to] after `afterId`, in id order, as the chain hashes them. */
export async function auditChainPage(
  q: Queryable,
  range: { from?: string | null; to?: string | null },
  afterId: string | null,
  limit: number,
): Promise<ChainRow[]> {
  const { rows } = await q.query<Omit<ChainRow, 'at'> & { at: Date }>(
    `SELECT id::text, tenant, at, service_actor, user_id::text, username, user_role, operation, method, path, arguments,
       outcome, status_code, error_code, tool_call_id, conversation_id, duration_ms, policy_action, policy_scope,
       policy_matched, prev_hash, hash
     FROM audit_log a
     WHERE ($1::bigint IS NULL OR a.id >= $1) AND ($2::bigint IS NULL OR a.id <= $2) AND ($3::bigint IS NULL OR a.id > $3)
     ORDER BY a.id LIMIT $4`,
    [range.from ?? null, range.to ?? null, afterId, limit],
  );
  return rows.map((r) => ({ ...r, at: r.at.toISOString() }));
}

/** The rows of [from, to] page by page, in id order (on one client: a snapshot's, for a consistent read). */
export async function* auditChainRows(q: Queryable, range: { from?: string | null; to?: string | null }, pageSize = 1000): AsyncGenerator<ChainRow> {
  let after: string | null = null;
  for (;;) {
    const page = await auditChainPage(q, range, after, pageSize);
    yield* page;
    if (page.length < pageSize) return;
    after = page[page.length - 1].id;
  }
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
