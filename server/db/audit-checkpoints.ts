/**
 * The audit_checkpoints table (migration 240, issue 36 item 3): each tenant's chain head, signed
 * with the checkpoint key (audit/checkpoint-key.ts). Signing takes a transaction-level advisory
 * lock, so replicas signing at once write one checkpoint per new head; a head already signed is
 * not signed again.
 * @module
 */
import type { ChainHead } from '../audit/chain.ts';
import type { Queryable } from './pool.ts';

export interface AuditCheckpoint {
  id: string;
  tenant: string;
  last_id: string;
  hash: string;
  jws: string;
  created_at: string;
}

/** Serialises signers (held until the caller's transaction ends). */
export async function lockCheckpoints(tx: Queryable): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('airlock:audit-checkpoints:' || current_schema()))`);
}

/** The heads no checkpoint has signed yet (each tenant's head whose last_id is newer than its newest checkpoint). */
export async function unsignedHeads(q: Queryable): Promise<ChainHead[]> {
  const { rows } = await q.query<ChainHead>(
    `SELECT h.tenant, h.last_id::text, h.hash FROM audit_chain_heads h
     WHERE h.last_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM audit_checkpoints c WHERE c.tenant = h.tenant AND c.last_id >= h.last_id)
     ORDER BY h.tenant`,
  );
  return rows;
}

export async function insertCheckpoint(q: Queryable, c: { tenant: string; last_id: string; hash: string; jws: string }): Promise<AuditCheckpoint> {
  const { rows } = await q.query<AuditCheckpoint & { created_at: Date }>(
    `INSERT INTO audit_checkpoints (tenant, last_id, hash, jws) VALUES ($1, $2, $3, $4) RETURNING id::text, tenant, last_id::text, hash, jws, created_at`,
    [c.tenant, c.last_id, c.hash, c.jws],
  );
  return { ...rows[0], created_at: rows[0].created_at.toISOString() };
}

/** The checkpoints whose last_id is in [from, to], in last_id order. */
export async function listCheckpoints(q: Queryable, range: { from?: string | null; to?: string | null } = {}): Promise<AuditCheckpoint[]> {
  const { rows } = await q.query<AuditCheckpoint & { created_at: Date }>(
    `SELECT id::text, tenant, last_id::text, hash, jws, created_at FROM audit_checkpoints
     WHERE ($1::bigint IS NULL OR last_id >= $1) AND ($2::bigint IS NULL OR last_id <= $2)
     ORDER BY last_id, id`,
    [range.from ?? null, range.to ?? null],
  );
  return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() }));
}
