/** Domain objects -> the tool endpoints' JSON (snake_case wire keys, mapped once here). */
import type { Dashboard } from '../../db/dashboards.ts';
import type { Deployment } from '../../db/deployments.ts';
import type { Environment, RunningVersion } from '../../db/environments.ts';
import type { MaintenanceEvent } from '../../db/maintenance.ts';
import type { Service } from '../../db/services.ts';
import type { Task } from '../../db/tasks.ts';

export const dashboardJson = (d: Dashboard) => ({
  id: d.id,
  title: d.title,
  description: d.description,
  tags: d.tags,
  service: d.service,
  url: d.url,
});

export const maintenanceJson = (e: MaintenanceEvent) => ({
  id: e.id,
  service: e.service,
  status: e.status,
  reason: e.reason,
  starts_at: e.startsAt,
  ends_at: e.endsAt,
  ended_at: e.endedAt,
  created_by: e.createdBy,
  ended_by: e.endedBy,
});

export const deploymentJson = (d: Deployment) => ({
  id: d.id,
  service: d.service,
  version: d.version,
  environment: d.environment,
  status: d.status,
  deployed_by: d.deployedBy,
  started_at: d.startedAt,
  finished_at: d.finishedAt,
  notes: d.notes,
  ...(d.previousVersion !== undefined ? { previous_version: d.previousVersion } : {}),
});

export const healthJson = (s: Service, checkedAt: Date) => ({
  service: s.name,
  display_name: s.displayName,
  status: s.status,
  in_maintenance: s.inMaintenance,
  latency_p95_ms: s.latencyP95Ms,
  error_rate_pct: s.errorRatePct,
  uptime_30d_pct: s.uptime30dPct,
  tier: s.tier,
  team: s.team,
  depends_on: s.dependsOn,
  checked_at: checkedAt,
});

export const environmentJson = (e: Environment, versions: RunningVersion[]) => ({
  name: e.name,
  description: e.description,
  region: e.region,
  cluster: e.cluster,
  url: e.url,
  deploy_freeze: e.deployFreeze,
  services: versions
    .filter((v) => v.environment === e.name)
    .map((v) => ({ service: v.service, version: v.version, deployed_at: v.deployedAt })),
});

export const taskJson = (t: Task) => ({
  id: t.id,
  title: t.title,
  description: t.description,
  service: t.service,
  priority: t.priority,
  status: t.status,
  created_by: t.createdBy,
  created_at: t.createdAt,
});
