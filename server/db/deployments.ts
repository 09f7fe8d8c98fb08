/**
 * The deployments table. A deploy here is simulated: it is recorded as succeeded at once, and the
 * environment's running version of the service becomes the new one.
 * @module
 */
import { AirlockError } from '../errors.ts';
import { getEnvironment } from './environments.ts';
import type { Queryable } from './pool.ts';
import { serviceExists } from './services.ts';

export interface Deployment {
  id: string;
  service: string;
  version: string;
  environment: string;
  status: 'succeeded' | 'failed' | 'rolled_back' | 'in_progress';
  deployedBy: string;
  startedAt: Date;
  finishedAt: Date | null;
  notes: string | null;
  /** The version that ran before this deployment (only on a new deployment). */
  previousVersion?: string | null;
}

interface DeploymentRow {
  id: string;
  service: string;
  version: string;
  environment: string;
  status: Deployment['status'];
  deployed_by: string;
  started_at: Date;
  finished_at: Date | null;
  notes: string | null;
}

function toDeployment(row: DeploymentRow): Deployment {
  return {
    id: row.id,
    service: row.service,
    version: row.version,
    environment: row.environment,
    status: row.status,
    deployedBy: row.deployed_by,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    notes: row.notes,
  };
}

const COLUMNS = 'd.id, d.service, d.version, d.environment, d.status, d.deployed_by, d.started_at, d.finished_at, d.notes';

/** Newest first. */
export async function listDeployments(
  q: Queryable,
  input: { service?: string; environment?: string; limit: number },
): Promise<Deployment[]> {
  const { rows } = await q.query<DeploymentRow>(
    `SELECT ${COLUMNS} FROM deployments d
     WHERE ($1::text IS NULL OR d.service = $1) AND ($2::text IS NULL OR d.environment = $2)
     ORDER BY d.started_at DESC, d.id DESC LIMIT $3`,
    [input.service ?? null, input.environment ?? null, input.limit],
  );
  return rows.map(toDeployment);
}

/**
 * Deploys `version` of a service to an environment. Throws NOT_FOUND for an unknown service or
 * environment, CONFLICT while the environment has a deploy freeze. Run inside a transaction.
 */
export async function createDeployment(
  q: Queryable,
  input: { service: string; version: string; environment: string; deployedBy: string },
): Promise<Deployment> {
  if (!(await serviceExists(q, input.service, { forUpdate: true }))) {
    throw new AirlockError('NOT_FOUND', `Unknown service "${input.service}".`, { details: { service: input.service } });
  }
  const environment = await getEnvironment(q, input.environment);
  if (!environment) {
    throw new AirlockError('NOT_FOUND', `Unknown environment "${input.environment}".`, {
      details: { environment: input.environment },
    });
  }
  if (environment.deployFreeze) {
    throw new AirlockError('CONFLICT', `${environment.name} has a deploy freeze.`, { details: { environment: environment.name } });
  }
  const previous = await q.query<{ version: string }>(
    `SELECT version FROM deployments WHERE service = $1 AND environment = $2 AND status = 'succeeded'
     ORDER BY started_at DESC, id DESC LIMIT 1`,
    [input.service, input.environment],
  );
  const { rows } = await q.query<DeploymentRow>(
    `INSERT INTO deployments AS d (service, version, environment, status, deployed_by, started_at, finished_at)
     VALUES ($1, $2, $3, 'succeeded', $4, now(), now()) RETURNING ${COLUMNS}`,
    [input.service, input.version, input.environment, input.deployedBy],
  );
  return { ...toDeployment(rows[0]), previousVersion: previous.rows[0]?.version ?? null };
}
