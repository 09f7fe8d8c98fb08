/**
 * The state an effect acts on, read for its preview and again, under the service row's lock, just
 * before it acts (issue 27 item 3): what a deploy replaces, what a maintenance window would meet.
 * The api hashes it (api/tools/preview.ts) so an approval can bind the state its approver saw.
 * @module
 */
import type { Queryable } from './pool.ts';
import { serviceExists } from './services.ts';

export interface DeployState {
  service: string;
  environment: string;
  /** The running version: the newest succeeded deployment, or null when none ran there yet. */
  current: { id: string; version: string; deployedBy: string; at: Date } | null;
  freeze: boolean;
  /** False: no such environment (the effect answers NOT_FOUND). */
  environmentExists: boolean;
  serviceExists: boolean;
}

export interface MaintenanceState {
  service: string;
  serviceExists: boolean;
  /** The service's active window, if any. */
  active: { id: string; endsAt: Date; createdBy: string } | null;
  /** Services that depend on this one (services.depends_on). */
  dependents: string[];
}

/** Reads a deploy's state; with `lock`, locks the service row first (run it in the effect's transaction). */
export async function readDeployState(q: Queryable, input: { service: string; environment: string; lock?: boolean }): Promise<DeployState> {
  const exists = await serviceExists(q, input.service, { forUpdate: input.lock === true });
  const env = await q.query<{ deploy_freeze: boolean }>('SELECT deploy_freeze FROM environments WHERE name = $1', [input.environment]);
  const current = await q.query<{ id: string; version: string; deployed_by: string; started_at: Date }>(
    `SELECT id, version, deployed_by, started_at FROM deployments WHERE service = $1 AND environment = $2 AND status = 'succeeded'
     ORDER BY started_at DESC, id DESC LIMIT 1`,
    [input.service, input.environment],
  );
  const row = current.rows[0];
  return {
    service: input.service,
    environment: input.environment,
    current: row ? { id: row.id, version: row.version, deployedBy: row.deployed_by, at: row.started_at } : null,
    freeze: env.rows[0]?.deploy_freeze ?? false,
    environmentExists: env.rows.length > 0,
    serviceExists: exists,
  };
}

/** Reads a maintenance window's state; with `lock`, locks the service row first. */
export async function readMaintenanceState(q: Queryable, input: { service: string; lock?: boolean }): Promise<MaintenanceState> {
  const exists = await serviceExists(q, input.service, { forUpdate: input.lock === true });
  const active = await q.query<{ id: string; ends_at: Date; created_by: string }>(
    `SELECT id, ends_at, created_by FROM maintenance_events
     WHERE service = $1 AND ended_at IS NULL AND starts_at <= now() AND ends_at > now() ORDER BY starts_at DESC LIMIT 1`,
    [input.service],
  );
  const dependents = await q.query<{ name: string }>('SELECT name FROM services WHERE $1 = ANY(depends_on) ORDER BY name', [input.service]);
  const a = active.rows[0];
  return {
    service: input.service,
    serviceExists: exists,
    active: a ? { id: a.id, endsAt: a.ends_at, createdBy: a.created_by } : null,
    dependents: dependents.rows.map((r) => r.name),
  };
}
