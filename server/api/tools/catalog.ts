/**
 * The tool endpoints: name (the agent's tool name), route and the permission each needs.
 * One table, read by the routes (RBAC + audit operation) and by show_capabilities.
 * @module
 */
import type { Permission } from '../../auth/index.ts';

export interface ToolSpec {
  name: string;
  method: 'GET' | 'POST';
  /** Under /api/tools. */
  path: string;
  /** null: any authenticated role. */
  permission: Permission | null;
  description: string;
}

export const TOOLS = [
  { name: 'show_capabilities', method: 'GET', path: '/capabilities', permission: null, description: 'Show what you can do here and which tools your role allows.' },
  { name: 'search_dashboards', method: 'GET', path: '/dashboards', permission: 'dashboards:read', description: 'Search monitoring dashboards by title, tags and description (latency, errors, capacity…).' },
  { name: 'get_dashboard', method: 'GET', path: '/dashboards/:id', permission: 'dashboards:read', description: 'Get one dashboard with its panels.' },
  { name: 'list_maintenance_events', method: 'GET', path: '/maintenance', permission: 'maintenance:read', description: 'List maintenance events: active, upcoming, past or all, optionally for one service.' },
  { name: 'start_maintenance', method: 'POST', path: '/maintenance', permission: 'maintenance:write', description: 'Start a maintenance window for a service now, for a number of minutes, with a reason.' },
  { name: 'end_maintenance', method: 'POST', path: '/maintenance/end', permission: 'maintenance:write', description: "End a service's active maintenance window." },
  { name: 'list_deployments', method: 'GET', path: '/deployments', permission: 'deployments:read', description: 'List recent deployments, optionally by service and environment.' },
  { name: 'deploy_service', method: 'POST', path: '/deployments', permission: 'deployments:write', description: 'Deploy a version of a service to an environment.' },
  { name: 'check_health', method: 'GET', path: '/health', permission: 'health:read', description: 'Check the health of one service or all: status, p95 latency, error rate, uptime.' },
  { name: 'get_environment', method: 'GET', path: '/environment', permission: 'environment:read', description: 'Describe an environment (production, staging, dev) and the versions running there.' },
  { name: 'create_task', method: 'POST', path: '/tasks', permission: 'tasks:write', description: 'File a follow-up task, optionally for a service, with a priority.' },
  { name: 'list_tasks', method: 'GET', path: '/tasks', permission: 'tasks:read', description: 'List recent tasks.' },
] as const satisfies readonly ToolSpec[];

export type ToolName = (typeof TOOLS)[number]['name'];

export function toolSpec(name: ToolName): ToolSpec {
  return TOOLS.find((t) => t.name === name)!;
}
