/**
 * The operational summary of `GET /api/agent/v1/metrics` (seed 000, fastreact.metrics.v1), from
 * the database every process shares, so any replica answers the same. Not a billing ledger.
 * @module
 */
import type { Queryable } from '../db/index.ts';

/** Ledger run status -> the status the v1 APIs report (issue 11 Decisions). */
export const V1_RUN_STATUS: Record<string, string> = { running: 'running', done: 'completed', paused: 'awaiting_approval', failed: 'failed', cancelled: 'cancelled' };

const ERROR_EVENT = `((kind = 'run.finished' AND payload->>'status' = 'failed') OR (kind = 'tool.result' AND payload->>'status' = 'error'))`;
const round = (v: number | null) => (v === null ? null : Math.round(v));

export async function metricsSummary(q: Queryable, now = new Date()) {
  const [runs, events, tools, approvals, recent] = await Promise.all([
    q.query<{ status: string; n: number; avg_ms: number | null }>(
      `SELECT status, count(*)::int AS n, avg(extract(epoch FROM finished_at - started_at) * 1000)::float8 AS avg_ms FROM runs GROUP BY status`,
    ),
    q.query<{ total: number; errors: number }>(`SELECT count(*)::int AS total, (count(*) FILTER (WHERE ${ERROR_EVENT}))::int AS errors FROM conversation_events`),
    q.query<{ n: number; avg_ms: number | null }>(`SELECT count(*)::int AS n, avg(duration_ms)::float8 AS avg_ms FROM audit_log`),
    q.query<{ status: string; n: number; avg_ms: number | null }>(
      `SELECT status, count(*)::int AS n, avg(extract(epoch FROM resolved_at - created_at) * 1000)::float8 AS avg_ms FROM approvals GROUP BY status`,
    ),
    q.query<{ run_id: string; created_at: Date; kind: string; payload: Record<string, unknown> }>(
      `SELECT run_id, created_at, kind, payload FROM conversation_events WHERE ${ERROR_EVENT} ORDER BY created_at DESC LIMIT 10`,
    ),
  ]);

  const runCounts: Record<string, number> = { queued: 0, running: 0, awaiting_approval: 0, completed: 0, failed: 0, cancelled: 0 };
  let finishedMs = 0;
  let finished = 0;
  for (const r of runs.rows) {
    runCounts[V1_RUN_STATUS[r.status] ?? r.status] = (runCounts[V1_RUN_STATUS[r.status] ?? r.status] ?? 0) + r.n;
    if (r.avg_ms !== null && r.status !== 'running') {
      finishedMs += r.avg_ms * r.n;
      finished += r.n;
    }
  }
  const approvalCounts: Record<string, number> = { pending: 0, approved: 0, denied: 0, expired: 0 };
  let resolvedMs = 0;
  let resolved = 0;
  for (const a of approvals.rows) {
    approvalCounts[a.status] = a.n;
    if (a.avg_ms !== null) {
      resolvedMs += a.avg_ms * a.n;
      resolved += a.n;
    }
  }
  const traceCount = runs.rows.reduce((n, r) => n + r.n, 0);
  return {
    schema: 'fastreact.metrics.v1',
    generated_at: now.toISOString(),
    runs: { live_count: runCounts.running, trace_count: traceCount, status_counts: runCounts, avg_duration_ms: finished ? round(finishedMs / finished) : null },
    events: { total_count: events.rows[0].total, error_count: events.rows[0].errors },
    tools: { audit_count: tools.rows[0].n, avg_duration_ms: round(tools.rows[0].avg_ms) },
    approvals: {
      status_counts: approvalCounts,
      pending_count: approvalCounts.pending,
      expired_count: approvalCounts.expired,
      avg_resolution_ms: resolved ? round(resolvedMs / resolved) : null,
    },
    errors: {
      total_count: events.rows[0].errors,
      recent: recent.rows.map((e) => ({
        run_id: e.run_id,
        at: e.created_at.toISOString(),
        source: e.kind === 'run.finished' ? 'run' : 'tool',
        code: (e.kind === 'run.finished' ? e.payload.error_code : e.payload.code) ?? null,
        message: (e.kind === 'run.finished' ? e.payload.error_detail : e.payload.error) ?? null,
        ...(e.kind === 'tool.result' ? { tool: e.payload.tool } : {}),
      })),
    },
    store: { backend: 'postgresql', runs: traceCount, events: events.rows[0].total, audit_rows: tools.rows[0].n, approvals: Object.values(approvalCounts).reduce((a, b) => a + b, 0) },
  };
}
