/**
 * The approval_receipts table: the signed receipt of each decided approval (one per approval).
 * @module
 */
import type { Queryable } from './pool.ts';

export interface StoredReceipt {
  approvalId: string;
  kid: string;
  receipt: string;
}

export async function insertReceipt(q: Queryable, r: StoredReceipt): Promise<void> {
  await q.query('INSERT INTO approval_receipts (approval_id, kid, receipt) VALUES ($1, $2, $3)', [r.approvalId, r.kid, r.receipt]);
}

export async function getReceipt(q: Queryable, approvalId: string): Promise<StoredReceipt | null> {
  const { rows } = await q.query<{ approval_id: string; kid: string; receipt: string }>(
    'SELECT approval_id, kid, receipt FROM approval_receipts WHERE approval_id = $1',
    [approvalId],
  );
  return rows[0] ? { approvalId: rows[0].approval_id, kid: rows[0].kid, receipt: rows[0].receipt } : null;
}

/** The receipts of the approvals whose decision rows lie in an audit id range (the export). */
export async function receiptsForAuditRange(q: Queryable, range: { from?: string | null; to?: string | null }): Promise<StoredReceipt[]> {
  const { rows } = await q.query<{ approval_id: string; kid: string; receipt: string }>(
    `SELECT r.approval_id, r.kid, r.receipt FROM approval_receipts r
     JOIN audit_log a ON a.operation LIKE 'approval.%' AND a.arguments->>'approval_id' = r.approval_id
     WHERE ($1::bigint IS NULL OR a.id >= $1) AND ($2::bigint IS NULL OR a.id <= $2) ORDER BY a.id`,
    [range.from ?? null, range.to ?? null],
  );
  return rows.map((r) => ({ approvalId: r.approval_id, kid: r.kid, receipt: r.receipt }));
}
