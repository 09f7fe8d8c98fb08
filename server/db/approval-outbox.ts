/**
 * The approval notification outbox (migration 151): events written in the transaction of the
 * transition they announce, deliveries per endpoint, and their counts for the metrics.
 * @module
 */
import { getApprovalRecord, type ApprovalRecord } from './approval-records.ts';
import type { AuditCheckpoint } from './audit-checkpoints.ts';
import type { Queryable } from './pool.ts';

export type ApprovalEventType = 'approval.requested' | 'approval.progress' | 'approval.decided' | 'approval.expired' | 'approval.escalated';
/** A signed audit chain head (issue 36 item 3): sent only to endpoints whose `events` name it. */
export const CHECKPOINT_EVENT = 'audit.checkpoint';

export type OutboxEvent =
  | {
      id: string;
      type: ApprovalEventType;
      approvalId: string;
      /** The approval as it was when the event was written. */
      approval: ApprovalRecord;
      createdAt: Date;
    }
  | { id: string; type: typeof CHECKPOINT_EVENT; checkpoint: AuditCheckpoint; createdAt: Date };

/** Writes a checkpoint's event, in `q` (the signing transaction). */
export async function enqueueCheckpointEvent(q: Queryable, checkpoint: AuditCheckpoint): Promise<void> {
  await q.query(`INSERT INTO approval_outbox (type, approval_id, snapshot) VALUES ($1, NULL, $2)`, [CHECKPOINT_EVENT, JSON.stringify(checkpoint)]);
}

/** Writes one event with the approval's snapshot, in `q` (the transition's transaction). */
export async function enqueueApprovalEvent(q: Queryable, type: ApprovalEventType, approvalId: string): Promise<void> {
  const record = await getApprovalRecord(q, approvalId);
  if (!record) return;
  await q.query(`INSERT INTO approval_outbox (type, approval_id, snapshot) VALUES ($1, $2, $3)`, [type, approvalId, JSON.stringify(record)]);
}

const DATES = ['createdAt', 'expiresAt', 'resolvedAt'] as const;

/** A stored snapshot back as a record (its dates were ISO strings). */
export function reviveRecord(raw: Record<string, unknown>): ApprovalRecord {
  const r = { ...raw } as Record<string, unknown>;
  for (const k of DATES) r[k] = r[k] ? new Date(r[k] as string) : null;
  r.decisions = ((raw.decisions as Array<Record<string, unknown>>) ?? []).map((d) => ({ ...d, decidedAt: new Date(d.decidedAt as string) }));
  return r as unknown as ApprovalRecord;
}

/** Expands events not yet expanded into one delivery per endpoint that wants their type. */
export async function expandOutbox(q: Queryable, endpoints: ReadonlyArray<{ url: string; events?: readonly string[] }>): Promise<number> {
  const { rows } = await q.query<{ id: string; type: string }>(`SELECT id, type FROM approval_outbox WHERE NOT expanded ORDER BY created_at LIMIT 500`);
  for (const e of rows) {
    for (const endpoint of endpoints) {
      // Approval events go to endpoints that list them or list nothing; checkpoints only where named.
      if (endpoint.events ? !endpoint.events.includes(e.type) : e.type === CHECKPOINT_EVENT) continue;
      await q.query(`INSERT INTO approval_webhook_deliveries (event_id, url) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [e.id, endpoint.url]);
    }
    await q.query(`UPDATE approval_outbox SET expanded = true WHERE id = $1`, [e.id]);
  }
  return rows.length;
}

export interface DueDelivery {
  event: OutboxEvent;
  url: string;
  attempts: number;
}

/** Deliveries due now, oldest first. */
export async function dueDeliveries(q: Queryable, now: Date, limit = 50): Promise<DueDelivery[]> {
  const { rows } = await q.query<{ id: string; type: OutboxEvent['type']; approval_id: string; snapshot: Record<string, unknown>; created_at: Date; url: string; attempts: number }>(
    `SELECT o.id, o.type, o.approval_id, o.snapshot, o.created_at, d.url, d.attempts
     FROM approval_webhook_deliveries d JOIN approval_outbox o ON o.id = d.event_id
     WHERE d.status = 'pending' AND d.next_at <= $1 ORDER BY o.created_at, d.url LIMIT $2`,
    [now, limit],
  );
  return rows.map((r) => ({
    event: r.type === CHECKPOINT_EVENT
      ? { id: r.id, type: r.type, checkpoint: r.snapshot as unknown as AuditCheckpoint, createdAt: r.created_at }
      : { id: r.id, type: r.type, approvalId: r.approval_id, approval: reviveRecord(r.snapshot), createdAt: r.created_at },
    url: r.url,
    attempts: r.attempts,
  }));
}

/** Records one attempt: delivered, or failed with the next try at `nextAt` (null: given up). */
export async function recordAttempt(q: Queryable, a: { eventId: string; url: string; ok: boolean; error: string | null; nextAt: Date | null; now: Date }): Promise<void> {
  await q.query(
    `UPDATE approval_webhook_deliveries SET attempts = attempts + 1, last_error = $3,
       status = CASE WHEN $4::boolean THEN 'delivered' WHEN $5::timestamptz IS NULL THEN 'failed' ELSE 'pending' END,
       delivered_at = CASE WHEN $4::boolean THEN $6::timestamptz ELSE NULL END, next_at = COALESCE($5::timestamptz, next_at)
     WHERE event_id = $1 AND url = $2`,
    [a.eventId, a.url, a.error, a.ok, a.nextAt, a.now],
  );
}

/** Deliveries by status (GET /api/agent/v1/metrics `webhooks`). */
export async function deliveryCounts(q: Queryable): Promise<{ pending: number; delivered: number; failed: number }> {
  const { rows } = await q.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM approval_webhook_deliveries GROUP BY status`);
  const by = Object.fromEntries(rows.map((r) => [r.status, r.n]));
  return { pending: by.pending ?? 0, delivered: by.delivered ?? 0, failed: by.failed ?? 0 };
}

/**
 * Marks every pending approval whose escalate_after_s has passed (and not escalated yet) as
 * escalated, writing its approval.escalated event, in `q` (one transaction: both or neither).
 */
export async function enqueueDueEscalations(q: Queryable, now: Date): Promise<number> {
  const { rows } = await q.query<{ id: string }>(
    `UPDATE approvals SET escalated_at = $1
     WHERE status = 'pending' AND escalate_after_s IS NOT NULL AND escalated_at IS NULL AND created_at + escalate_after_s * interval '1 second' <= $1
     RETURNING id`,
    [now],
  );
  for (const r of rows) await enqueueApprovalEvent(q, 'approval.escalated', r.id);
  return rows.length;
}
