/**
 * The maintenance_events table. An event is upcoming before starts_at, active until it is ended or
 * reaches ends_at, past afterwards. A service has at most one active event: starting one locks the
 * service row first, so two concurrent starts cannot both succeed.
 * @module
 */
import { AirlockError } from '../errors.ts';
import type { Queryable } from './pool.ts';
import { serviceExists } from './services.ts';

export type MaintenanceStatus = 'active' | 'upcoming' | 'past';

export interface MaintenanceEvent {
  id: string;
  service: string;
  reason: string;
  status: MaintenanceStatus;
  startsAt: Date;
  endsAt: Date;
  endedAt: Date | null;
  createdBy: string;
  endedBy: string | null;
}

interface MaintenanceRow {
  id: string;
  service: string;
  reason: string;
  status: MaintenanceStatus;
  starts_at: Date;
  ends_at: Date;
  ended_at: Date | null;
  created_by: string;
  ended_by: string | null;
}

function toEvent(row: MaintenanceRow): MaintenanceEvent {
  return {
    id: row.id,
    service: row.service,
    reason: row.reason,
    status: row.status,
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    endedAt: row.ended_at,
    createdBy: row.created_by,
    endedBy: row.ended_by,
  };
}

const STATUS = `CASE WHEN e.ended_at IS NOT NULL OR e.ends_at <= now() THEN 'past'
                     WHEN e.starts_at > now() THEN 'upcoming' ELSE 'active' END`;
const COLUMNS = `e.id, e.service, e.reason, ${STATUS} AS status, e.starts_at, e.ends_at, e.ended_at, e.created_by, e.ended_by`;

/** Events filtered by status and service: active and upcoming soonest first, past newest first. */
export async function listMaintenance(
  q: Queryable,
  input: { status: MaintenanceStatus | 'all'; service?: string; limit?: number },
): Promise<MaintenanceEvent[]> {
  const { rows } = await q.query<MaintenanceRow>(
    `SELECT * FROM (SELECT ${COLUMNS} FROM maintenance_events e WHERE ($1::text IS NULL OR e.service = $1)) x
     WHERE ($2 = 'all' OR x.status = $2)
     ORDER BY CASE x.status WHEN 'active' THEN 0 WHEN 'upcoming' THEN 1 ELSE 2 END,
              CASE WHEN x.status = 'past' THEN -extract(epoch FROM x.starts_at) ELSE extract(epoch FROM x.starts_at) END
     LIMIT $3`,
    [input.service ?? null, input.status, input.limit ?? 100],
  );
  return rows.map(toEvent);
}

/**
 * Starts maintenance now for `durationMinutes`. Throws NOT_FOUND for an unknown service and
 * CONFLICT when one is already active. Run it inside a transaction (it locks the service row).
 */
export async function startMaintenance(
  q: Queryable,
  input: { service: string; durationMinutes: number; reason: string; createdBy: string },
): Promise<MaintenanceEvent> {
  if (!(await serviceExists(q, input.service, { forUpdate: true }))) {
    throw new AirlockError('NOT_FOUND', `Unknown service "${input.service}".`, { details: { service: input.service } });
  }
  const active = await listMaintenance(q, { status: 'active', service: input.service, limit: 1 });
  if (active[0]) {
    throw new AirlockError('CONFLICT', `${input.service} is already in maintenance until ${active[0].endsAt.toISOString()}.`, {
      details: { service: input.service, maintenance_id: active[0].id },
    });
  }
  const { rows } = await q.query<MaintenanceRow>(
    `INSERT INTO maintenance_events AS e (service, reason, starts_at, ends_at, created_by)
     VALUES ($1, $2, now(), now() + make_interval(mins => $3), $4) RETURNING ${COLUMNS}`,
    [input.service, input.reason, input.durationMinutes, input.createdBy],
  );
  return toEvent(rows[0]);
}

/** Ends the service's active event now. Throws NOT_FOUND for an unknown service or no active event. */
export async function endMaintenance(q: Queryable, input: { service: string; endedBy: string }): Promise<MaintenanceEvent> {
  if (!(await serviceExists(q, input.service, { forUpdate: true }))) {
    throw new AirlockError('NOT_FOUND', `Unknown service "${input.service}".`, { details: { service: input.service } });
  }
  const { rows } = await q.query<MaintenanceRow>(
    `UPDATE maintenance_events e SET ended_at = now(), ended_by = $2
     WHERE e.service = $1 AND e.ended_at IS NULL AND e.starts_at <= now() AND e.ends_at > now()
     RETURNING ${COLUMNS}`,
    [input.service, input.endedBy],
  );
  if (!rows[0]) {
    throw new AirlockError('NOT_FOUND', `${input.service} has no active maintenance.`, { details: { service: input.service } });
  }
  return toEvent(rows[0]);
}
