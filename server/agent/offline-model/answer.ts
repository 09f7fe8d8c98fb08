/**
 * Answer rendering for the offline model: tool results -> a sentence or a small markdown table;
 * missing arguments -> a short question; anything else -> a helpful reply. Pure.
 * @module
 */
import type { ToolArgs } from './intents.ts';
import { mainArray, renderData, renderTable } from './render-data.ts';

/** One tool call of the last assistant turn with the content of its tool message. */
export interface ToolResult {
  name: string;
  args: Record<string, unknown>;
  content: string;
}

/** Marker words the offline model looks for to know its last reply was a question. */
export const CLARIFY_MARKER = 'I still need';

/** How an action reads in a sentence: "deploy checkout-api 2.4.1 to staging". */
export function describeAction(name: string, args: Record<string, unknown>): string {
  const a = (k: string, fallback: string) => (args[k] === undefined || args[k] === '' ? fallback : String(args[k]));
  switch (name) {
    case 'start_maintenance':
      return `start maintenance on ${a('service', 'the service')}`;
    case 'end_maintenance':
      return `end the maintenance on ${a('service', 'the service')}`;
    case 'deploy_service':
      return `deploy ${a('service', 'the service')}${args.version ? ` ${args.version}` : ''}${args.environment ? ` to ${args.environment}` : ''}`;
    case 'create_task':
      return args.title ? `create the task “${args.title}”` : 'create a task';
    case 'search_dashboards':
      return 'search the dashboards';
    case 'get_dashboard':
      return `open dashboard ${a('id', '')}`.trim();
    case 'check_health':
      return args.service ? `check the health of ${args.service}` : 'check service health';
    case 'get_environment':
      return args.environment ? `read the ${args.environment} environment` : 'read the environments';
    case 'list_deployments':
      return 'list the deployments';
    case 'list_maintenance_events':
      return 'list the maintenance events';
    case 'show_capabilities':
      return 'read your capabilities';
    default:
      return `run ${name}`;
  }
}

const FIELD_QUESTIONS: Record<string, string> = {
  service: 'which service',
  version: 'which version',
  environment: 'which environment (for example staging or production)',
  duration_minutes: 'for how many minutes',
  reason: 'the reason',
  title: 'a title for the task',
  query: 'what to search for',
  id: 'which dashboard (its id)',
};

function listWords(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** A short question for the arguments a tool call still lacks. */
export function renderQuestion(tool: string, known: ToolArgs, missing: string[]): string {
  const asks = missing.map((f) => FIELD_QUESTIONS[f] ?? f.replace(/_/g, ' '));
  return `To ${describeAction(tool, known)}, ${CLARIFY_MARKER} ${listWords(asks)}. Could you tell me?`;
}

/** The reply to anything the tools do not cover. */
export function renderHelp(text: string): string {
  const greeting = /^\s*(hi|hello|hey|good (morning|afternoon|evening))\b/i.test(text) ? 'Hello! ' : '';
  return (
    `${greeting}I'm the Airlock operations assistant. I can search and open dashboards, check service health, ` +
    'list, start and end maintenance windows, list deployments and deploy a service, describe environments and ' +
    'create tasks. Deploying and maintenance changes wait for your confirmation. ' +
    'Try “what\'s the health of payments-api” or “deploy checkout-api 2.4.1 to staging”.'
  );
}

/** The reply when the intent's tool is not among the tools offered this turn. */
export function renderUnavailable(tool: string): string {
  return `I can't ${describeAction(tool, {})} from here: that tool is not available to me right now.`;
}

function parse(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

function errorOf(data: unknown): { code?: string; message: string } | null {
  if (typeof data === 'string') return /^error\b/i.test(data) ? { message: data.replace(/^error:?\s*/i, '') } : null;
  if (data && typeof data === 'object' && 'error' in data) {
    const e = (data as { error: unknown }).error;
    if (typeof e === 'string') return { message: e };
    if (e && typeof e === 'object') {
      const { code, message } = e as { code?: unknown; message?: unknown };
      return { code: typeof code === 'string' ? code : undefined, message: typeof message === 'string' ? message : 'unknown error' };
    }
  }
  return null;
}

function renderNotDone(r: ToolResult, err: { code?: string; message: string }): string {
  const action = describeAction(r.name, r.args);
  switch (err.code) {
    case 'DENIED':
      return `I did not ${action}: you denied the request, so nothing was changed.`;
    case 'APPROVAL_EXPIRED':
      return `I did not ${action}: the approval expired before it was confirmed, so nothing was changed.`;
    case 'SUPERSEDED':
      return `I did not ${action}: the request was replaced by a newer message, so nothing was changed.`;
    case 'CANCELLED':
      return `I did not finish: the request to ${action} was cancelled.`;
    case 'FORBIDDEN':
      return `I could not ${action}: you don't have permission to do that. ${err.message}`.trim();
    case 'UNAUTHORIZED':
      return `I could not ${action}: your session is not authorised. Please sign in again.`;
    default:
      return `I could not ${action}: ${err.message}`;
  }
}

function lead(r: ToolResult): string {
  const q = r.args;
  switch (r.name) {
    case 'search_dashboards':
      return q.query ? `Dashboards matching “${q.query}”:` : 'Dashboards:';
    case 'get_dashboard':
      return `Dashboard ${q.id ?? ''}:`.replace(' :', ':');
    case 'check_health':
      return q.service ? `Health of ${q.service}:` : 'Service health:';
    case 'get_environment':
      return q.environment ? `The ${q.environment} environment:` : 'Environments:';
    case 'list_deployments':
      return 'Recent deployments:';
    case 'list_maintenance_events':
      return q.status ? `Maintenance events (${q.status}):` : 'Maintenance events:';
    default:
      return `Result of ${r.name}:`;
  }
}

function renderSuccess(r: ToolResult, data: unknown): string {
  const a = r.args;
  const obj = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  switch (r.name) {
    case 'start_maintenance':
      return `Done: maintenance started on ${a.service} for ${a.duration_minutes} minutes (${a.reason}).`;
    case 'end_maintenance':
      return `Done: the maintenance on ${a.service} has ended.`;
    case 'deploy_service':
      return `Done: ${a.service} ${a.version} is deploying to ${a.environment}${obj.status ? ` (status: ${obj.status})` : ''}.`;
    case 'create_task':
      return `Created the task “${a.title ?? obj.title}”${obj.id ? ` (id ${obj.id})` : ''}.`;
    case 'show_capabilities': {
      const user = obj.user as { username?: string; role?: string } | undefined;
      const tools = Array.isArray(obj.tools) ? (obj.tools as Record<string, unknown>[]) : [];
      const who = user?.role ? ` (you are ${user.username ?? 'signed in'}, role ${user.role})` : '';
      const rows = tools.map((t) => ({ tool: t.name, allowed: t.allowed ? 'yes' : 'no', description: t.description }));
      return `Here is what I can do for you${who}:\n\n${rows.length ? renderTable(rows) : renderData(data)}`;
    }
    case 'check_health':
      if (typeof obj.status === 'string' && obj.service) return renderServiceHealth(obj);
      break;
    case 'get_environment':
    case 'get_dashboard':
      if (typeof obj.description === 'string') return renderDescribed(r, obj);
      break;
  }
  const summary = obj.summary && typeof obj.summary === 'object' ? `${renderData(obj.summary)}\n\n` : '';
  return `${lead(r)}\n\n${summary}${renderData(data, 'Nothing found.')}`;
}

function renderServiceHealth(h: Record<string, unknown>): string {
  const facts = [
    h.latency_p95_ms !== undefined ? `p95 latency ${h.latency_p95_ms} ms` : '',
    h.error_rate_pct !== undefined ? `error rate ${h.error_rate_pct} %` : '',
    h.uptime_30d_pct !== undefined ? `30-day uptime ${h.uptime_30d_pct} %` : '',
    h.in_maintenance ? 'in maintenance' : '',
  ].filter(Boolean);
  return `${h.service} is ${h.status}${facts.length ? ` (${facts.join(', ')})` : ''}.`;
}

/** An object with a name/title and description, plus its list (an environment's services, a dashboard's panels). */
function renderDescribed(r: ToolResult, obj: Record<string, unknown>): string {
  const name = obj.title ?? obj.name ?? r.args.id ?? r.args.environment;
  const where = ['region', 'cluster', 'url'].filter((k) => typeof obj[k] === 'string').map((k) => `${k} ${obj[k]}`);
  const head = `**${name}**: ${obj.description}${where.length ? ` (${where.join(', ')})` : ''}.`;
  const rows = mainArray(obj);
  return rows && rows.length ? `${head}\n\n${renderTable(rows)}` : head;
}

/** Was this call answered as replaced by a newer message (the gate's SUPERSEDED)? */
export function isSuperseded(r: ToolResult): boolean {
  return errorOf(parse(r.content))?.code === 'SUPERSEDED';
}

/** The answer to the results of the last assistant turn's tool calls. */
export function renderToolResults(results: ToolResult[]): string {
  return results
    .map((r) => {
      const data = parse(r.content);
      const err = errorOf(data);
      return err ? renderNotDone(r, err) : renderSuccess(r, data);
    })
    .join('\n\n');
}
