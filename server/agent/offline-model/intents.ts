/**
 * Intent parsing for the offline model: one user sentence -> the tool it asks for and the
 * arguments found in it. Pure; the first matching rule wins, most specific first.
 * @module
 */
import {
  extractDashboardId,
  extractDashboardQuery,
  extractDurationMinutes,
  extractEnvironment,
  extractMaintenanceStatus,
  extractPriority,
  extractReason,
  extractService,
  extractTaskTitle,
  extractVersion,
} from './extract.ts';

export type ToolArgs = Record<string, string | number>;

/** What the user asked for: a tool and the arguments found (missing ones are simply absent). */
export interface Intent {
  tool: string;
  args: ToolArgs;
}

function compact(args: Record<string, string | number | undefined>): ToolArgs {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined)) as ToolArgs;
}

interface Rule {
  test: RegExp;
  unless?: RegExp;
  build: (text: string) => Intent;
}

const RULES: Rule[] = [
  {
    test: /\b(what can you do|what do you do|help me|^help\b|capabilit|what tools|which tools|what are you able|permissions?)\b/i,
    build: () => ({ tool: 'show_capabilities', args: {} }),
  },
  {
    test: /\b(end|stop|finish|complete|close|cancel|terminate)\b.*\bmaintenance\b|\bmaintenance\b.*\b(is (over|done)|end)\b/i,
    build: (t) => ({ tool: 'end_maintenance', args: compact({ service: extractService(t) }) }),
  },
  {
    test: /\b(start|begin|open|put|enter|schedule|plan|create)\b.*\bmaintenance\b|\bmaintenance (on|for) [a-z]/i,
    unless: /^\s*(list|show|any|which|what|are there|get)\b|\bmaintenance (events|windows)\b/i,
    build: (t) => ({
      tool: 'start_maintenance',
      args: compact({ service: extractService(t), duration_minutes: extractDurationMinutes(t), reason: extractReason(t) }),
    }),
  },
  {
    test: /\bmaintenance\b/i,
    build: (t) => ({
      tool: 'list_maintenance_events',
      args: compact({ status: extractMaintenanceStatus(t), service: extractService(t) }),
    }),
  },
  {
    test: /\b(deployments|deploy history|recent deploys|deploys|releases|last deploy|what was deployed|what's deployed)\b/i,
    build: (t) => ({
      tool: 'list_deployments',
      args: compact({ service: extractService(t), environment: extractEnvironment(t) }),
    }),
  },
  {
    test: /\b(deploy|roll ?out|ship|release)\b/i,
    build: (t) => ({
      tool: 'deploy_service',
      args: compact({ service: extractService(t), version: extractVersion(t), environment: extractEnvironment(t) }),
    }),
  },
  {
    test: /\b(health|healthy|status of|is [\w-]+ (up|down|ok)|uptime|down\b)/i,
    build: (t) => ({ tool: 'check_health', args: compact({ service: extractService(t) }) }),
  },
  {
    test: /\b(environments?|env info|config(uration)? of)\b/i,
    build: (t) => ({ tool: 'get_environment', args: compact({ environment: extractEnvironment(t) }) }),
  },
  {
    test: /\b(create|open|add|file|make|raise|log|new)\b.*\b(task|ticket|todo)\b/i,
    build: (t) => ({
      tool: 'create_task',
      args: compact({ title: extractTaskTitle(t), priority: extractPriority(t), service: extractService(t) }),
    }),
  },
  {
    test: /\b(get|open|show|fetch|display)\b.*\bdashboard\s+(id\s+|#)?[\w-]*\d|\bdashboard\s+(id\s+|#)?[a-z0-9]+-[a-z0-9-]+\b/i,
    build: (t) => ({ tool: 'get_dashboard', args: compact({ id: extractDashboardId(t) }) }),
  },
  {
    test: /\bdashboards?\b/i,
    build: (t) => ({ tool: 'search_dashboards', args: compact({ query: extractDashboardQuery(t) }) }),
  },
];

/** The tools these rules know by name; any other offered tool is read from its name and schema. */
export const KNOWN_TOOLS: ReadonlySet<string> = new Set([
  'show_capabilities', 'search_dashboards', 'get_dashboard', 'list_maintenance_events', 'start_maintenance', 'end_maintenance',
  'list_deployments', 'deploy_service', 'check_health', 'get_environment', 'create_task',
]);

/** The intent of one user message, or null when it asks for nothing the tools do. */
export function parseIntent(text: string): Intent | null {
  const t = text.trim();
  for (const rule of RULES) {
    if (rule.test.test(t) && !(rule.unless && rule.unless.test(t))) return rule.build(t);
  }
  return null;
}
