/**
 * The operations the assistant can perform, each declared once: its endpoint under `/api/tools`,
 * the permission it needs, whether it waits for the user's approval and the question that approval
 * asks. The api's routes (RBAC, audit, show_capabilities), the agent's tools (request shape, pause)
 * and the approval cards all read this table. A leaf: it imports nothing of ours but types.
 * @module
 */
import type { Permission } from '../auth/index.ts';

type Args = Record<string, unknown>;

export interface ToolSpec {
  name: string;
  method: 'GET' | 'POST';
  /** Under /api/tools; `:name` segments are filled from the call's params. */
  path: string;
  /** null: any authenticated role. */
  permission: Permission | null;
  /** What show_capabilities tells the user. */
  description: string;
  /**
   * Present when the operation pauses for the user's approval: the question its card asks, and
   * `scope`, the arguments a standing grant covers by their exact values by default (issue 27): the
   * narrowest useful grant, this service (to this environment), never "any service" (issue 37 item 6).
   */
  approval?: { prompt: (args: Args) => string; preview?: true; scope?: readonly string[] };
}

const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);
const service = (args: Args) => str(args.service) ?? 'the service';

export const TOOLS = [
  { name: 'show_capabilities', method: 'GET', path: '/capabilities', permission: null, description: 'Show what you can do here and which tools your role allows.' },
  { name: 'search_dashboards', method: 'GET', path: '/dashboards', permission: 'dashboards:read', description: 'Search monitoring dashboards by title, tags and description (latency, errors, capacity…).' },
  { name: 'get_dashboard', method: 'GET', path: '/dashboards/:id', permission: 'dashboards:read', description: 'Get one dashboard with its panels.' },
  { name: 'list_maintenance_events', method: 'GET', path: '/maintenance', permission: 'maintenance:read', description: 'List maintenance events: active, upcoming, past or all, optionally for one service.' },
  {
    name: 'start_maintenance', method: 'POST', path: '/maintenance', permission: 'maintenance:write',
    description: 'Start a maintenance window for a service now, for a number of minutes, with a reason.',
    approval: {
      prompt: (args) => {
        const minutes = str(args.duration_minutes);
        const reason = str(args.reason);
        return `Start maintenance on ${service(args)}${minutes ? ` for ${minutes} minutes` : ''}${reason ? ` (reason: ${reason})` : ''}?`;
      },
      // The api answers ?dry_run=true for it (issue 27 item 3).
      preview: true,
      scope: ['service'],
    },
  },
  {
    name: 'end_maintenance', method: 'POST', path: '/maintenance/end', permission: 'maintenance:write',
    description: "End a service's active maintenance window.",
    approval: { prompt: (args) => `End the active maintenance on ${service(args)}?`, scope: ['service'] },
  },
  { name: 'list_deployments', method: 'GET', path: '/deployments', permission: 'deployments:read', description: 'List recent deployments, optionally by service and environment.' },
  {
    name: 'deploy_service', method: 'POST', path: '/deployments', permission: 'deployments:write',
    description: 'Deploy a version of a service to an environment.',
    approval: { prompt: (args) => `Deploy ${service(args)} version ${str(args.version) ?? '?'} to ${str(args.environment) ?? '?'}?`, preview: true, scope: ['service', 'environment'] },
  },
  { name: 'check_health', method: 'GET', path: '/health', permission: 'health:read', description: 'Check the health of one service or all: status, p95 latency, error rate, uptime.' },
  { name: 'get_environment', method: 'GET', path: '/environment', permission: 'environment:read', description: 'Describe an environment (production, staging, dev) and the versions running there.' },
  { name: 'create_task', method: 'POST', path: '/tasks', permission: 'tasks:write', description: 'File a follow-up task, optionally for a service, with a priority.' },
  { name: 'list_tasks', method: 'GET', path: '/tasks', permission: 'tasks:read', description: 'List recent tasks.' },
] as const satisfies readonly ToolSpec[];

export type ToolName = (typeof TOOLS)[number]['name'];

export function toolSpec(name: ToolName): ToolSpec {
  return TOOLS.find((t) => t.name === name)!;
}

/** The spec of a tool by any name (undefined for tools this table does not declare, e.g. MCP tools). */
export function findToolSpec(name: string): ToolSpec | undefined {
  return (TOOLS as readonly ToolSpec[]).find((t) => t.name === name);
}

/** Names of the operations that pause for approval. */
export const APPROVAL_TOOLS: readonly string[] = (TOOLS as readonly ToolSpec[]).filter((t) => t.approval).map((t) => t.name);

/** The question an approval card asks: the operation's own, or one naming the tool and its arguments. */
export function approvalPrompt(tool: string, args: Args): string {
  const own = findToolSpec(tool)?.approval;
  if (own) return own.prompt(args);
  const shown = Object.entries(args).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return `Run ${tool}${shown.length ? ` with ${shown.join(', ')}` : ''}?`;
}

/** The backend route of an operation, `:param` segments unfilled (a span's name, server/telemetry). */
export function toolRoute(spec: ToolSpec): string {
  return `/api/tools${spec.path}`;
}

/** The backend path of a call: its route with its `:param` segments filled. */
export function toolPath(spec: ToolSpec, params: Record<string, string> = {}): string {
  return toolRoute(spec).replace(/:(\w+)/g, (_, key: string) => encodeURIComponent(params[key] ?? ''));
}
