/**
 * The environments table (production, staging, dev) and what runs in each: the version of every
 * service is the one of its latest successful deployment there.
 * @module
 */
import type { Queryable } from './pool.ts';

export interface Environment {
  name: string;
  description: string;
  region: string;
  cluster: string;
  url: string;
  deployFreeze: boolean;
}

export interface RunningVersion {
  service: string;
  environment: string;
  version: string;
  deployedAt: Date;
}

interface EnvironmentRow {
  name: string;
  description: string;
  region: string;
  cluster: string;
  url: string;
  deploy_freeze: boolean;
}

function toEnvironment(row: EnvironmentRow): Environment {
  return {
    name: row.name,
    description: row.description,
    region: row.region,
    cluster: row.cluster,
    url: row.url,
    deployFreeze: row.deploy_freeze,
  };
}

/** Every environment, production first. */
export async function listEnvironments(q: Queryable): Promise<Environment[]> {
  const { rows } = await q.query<EnvironmentRow>(
    `SELECT * FROM environments ORDER BY array_position(ARRAY['production', 'staging', 'dev'], name), name`,
  );
  return rows.map(toEnvironment);
}

export async function getEnvironment(q: Queryable, name: string): Promise<Environment | null> {
  const { rows } = await q.query<EnvironmentRow>('SELECT * FROM environments WHERE name = $1', [name]);
  return rows[0] ? toEnvironment(rows[0]) : null;
}

/** The running version of each service, per environment (optionally one environment). */
export async function listRunningVersions(q: Queryable, environment?: string): Promise<RunningVersion[]> {
  const { rows } = await q.query<{ service: string; environment: string; version: string; started_at: Date }>(
    `SELECT DISTINCT ON (service, environment) service, environment, version, started_at
     FROM deployments WHERE status = 'succeeded' AND ($1::text IS NULL OR environment = $1)
     ORDER BY service, environment, started_at DESC, id DESC`,
    [environment ?? null],
  );
  return rows.map((r) => ({ service: r.service, environment: r.environment, version: r.version, deployedAt: r.started_at }));
}
