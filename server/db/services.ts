/**
 * The services table (ops domain): each service's description, owner and current health figures.
 * @module
 */
import type { Queryable } from './pool.ts';

export type ServiceStatus = 'healthy' | 'degraded' | 'down';

export interface Service {
  name: string;
  displayName: string;
  description: string;
  team: string;
  tier: number;
  status: ServiceStatus;
  latencyP95Ms: number;
  errorRatePct: number;
  uptime30dPct: number;
  dependsOn: string[];
  /** True while a maintenance event is active for it. */
  inMaintenance: boolean;
}

interface ServiceRow {
  name: string;
  display_name: string;
  description: string;
  team: string;
  tier: number;
  status: ServiceStatus;
  latency_p95_ms: number;
  error_rate_pct: string;
  uptime_30d_pct: string;
  depends_on: string[];
  in_maintenance: boolean;
}

function toService(row: ServiceRow): Service {
  return {
    name: row.name,
    displayName: row.display_name,
    description: row.description,
    team: row.team,
    tier: row.tier,
    status: row.status,
    latencyP95Ms: row.latency_p95_ms,
    errorRatePct: Number(row.error_rate_pct),
    uptime30dPct: Number(row.uptime_30d_pct),
    dependsOn: row.depends_on,
    inMaintenance: row.in_maintenance,
  };
}

const SELECT = `SELECT s.*, EXISTS (
    SELECT 1 FROM maintenance_events e WHERE e.service = s.name AND e.ended_at IS NULL
      AND e.starts_at <= now() AND e.ends_at > now()) AS in_maintenance
  FROM services s`;

/** Every service, by name. */
export async function listServices(q: Queryable): Promise<Service[]> {
  const { rows } = await q.query<ServiceRow>(`${SELECT} ORDER BY s.name`);
  return rows.map(toService);
}

/** One service by name, or null. */
export async function getService(q: Queryable, name: string): Promise<Service | null> {
  const { rows } = await q.query<ServiceRow>(`${SELECT} WHERE s.name = $1`, [name]);
  return rows[0] ? toService(rows[0]) : null;
}

/** True when the service exists; with `forUpdate` (inside a transaction) it also locks its row. */
export async function serviceExists(q: Queryable, name: string, options: { forUpdate?: boolean } = {}): Promise<boolean> {
  const { rowCount } = await q.query(`SELECT 1 FROM services WHERE name = $1${options.forUpdate ? ' FOR UPDATE' : ''}`, [name]);
  return (rowCount ?? 0) > 0;
}
