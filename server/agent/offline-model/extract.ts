/**
 * Argument extraction for the offline model: small pure functions that pull one value each out of
 * a user's sentence ("deploy checkout-api 2.4.1 to staging" -> service, version, environment).
 * @module
 */

/** Words that look like names after "on"/"of"/"for" but are not services. */
const NOT_SERVICES = new Set([
  'a', 'an', 'the', 'all', 'every', 'each', 'any', 'some', 'me', 'us', 'it', 'this', 'that', 'service', 'services',
  'minutes', 'minute', 'hours', 'hour', 'staging', 'production', 'prod', 'dev', 'development', 'qa', 'test',
  'maintenance', 'deployments', 'deployment', 'dashboards', 'dashboard', 'latency', 'health', 'status', 'now',
  'today', 'environment', 'environments', 'everything', 'tasks', 'task', 'events', 'windows', 'high', 'low', 'medium',
]);

/** A service name: a hyphenated identifier (payments-api, db-primary) or the word after "on/of/for service". */
export function extractService(text: string): string | undefined {
  const hyphenated = text.match(/\b[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+\b/gi)?.find((w) => !/^\d/.test(w));
  if (hyphenated) return hyphenated.toLowerCase();
  const named = text.match(/\bservice\s+([a-z][\w-]*)/i) ?? text.match(/\b(?:on|of|for|to)\s+([a-z][\w-]*)/i);
  const word = named?.[1]?.toLowerCase();
  return word && !NOT_SERVICES.has(word) ? word : undefined;
}

/** A version such as 2.4.1, v1.2 or 3.0.0-rc.1. */
export function extractVersion(text: string): string | undefined {
  return text.match(/\bv?(\d+\.\d+(?:\.\d+)?(?:-[0-9a-z.]+)?)\b/i)?.[1];
}

const ENVIRONMENTS: Record<string, string> = {
  production: 'production', prod: 'production', staging: 'staging', stage: 'staging',
  development: 'dev', dev: 'dev', qa: 'qa', test: 'test',
};

/** An environment name, normalised to the backend's names (prod -> production, stage -> staging, development -> dev). */
export function extractEnvironment(text: string): string | undefined {
  const m = text.match(/\b(production|prod|staging|stage|development|dev|qa|test)\b/i);
  return m ? ENVIRONMENTS[m[1].toLowerCase()] : undefined;
}

/** A duration in minutes: "30 minutes", "2 hours", "1h", "45 min", "an hour". */
export function extractDurationMinutes(text: string): number | undefined {
  if (/\b(an|one) hour\b/i.test(text)) return 60;
  if (/\bhalf an hour\b/i.test(text)) return 30;
  const m = text.match(/\b(\d+(?:\.\d+)?)\s*(minutes?|mins?|m|hours?|hrs?|h)\b/i);
  if (!m) return undefined;
  const n = Number(m[1]);
  return Math.round(/^h/i.test(m[2]) ? n * 60 : n);
}

function tidy(phrase: string): string | undefined {
  const t = phrase
    .replace(/^\s*(?:of\s+)?(?:a|an|the)\s+/i, '')
    .replace(/[\s.!?,;:]+$/, '')
    .trim();
  return t.length > 0 ? t : undefined;
}

/** The reason after "because (of)", "due to", "for a/an …" or "reason: …". */
export function extractReason(text: string): string | undefined {
  const m =
    text.match(/\b(?:because(?:\s+of)?|due\s+to|reason:?)\s+(.+)$/i) ??
    text.match(/\bfor\s+(?:a|an|the)\s+(.+)$/i);
  return m ? tidy(m[1].replace(/^of\s+/i, '')) : undefined;
}

/** The search terms of a dashboard request: "search dashboards for latency" -> "latency". */
export function extractDashboardQuery(text: string): string | undefined {
  const after = text.match(/\bdashboards?\s+(?:for|about|on|with|matching|named|called|related to|showing)\s+(.+)$/i);
  if (after) return tidy(after[1]);
  const before = text.match(/\b(?:show|find|search|list|get|any)?\s*(?:me\s+)?(?:the\s+|all\s+)?([\w\s-]+?)\s+dashboards?\b/i);
  const words = before?.[1]?.replace(/\b(search|find|show|list|get|me|for|the|all|any|a|some|my)\b/gi, '').trim();
  return words ? words : undefined;
}

/** A dashboard id: "dashboard 42", "dashboard dash-latency", "dashboard id abc123". */
export function extractDashboardId(text: string): string | undefined {
  const m = text.match(/\bdashboard\s+(?:id\s+|#)?([\w-]*\d[\w-]*|[a-z0-9]+(?:-[a-z0-9]+)+)\b/i);
  return m?.[1];
}

/** The maintenance status filter: active, upcoming, past or all. */
export function extractMaintenanceStatus(text: string): 'active' | 'upcoming' | 'past' | 'all' | undefined {
  if (/\b(active|current|ongoing|running)\b/i.test(text)) return 'active';
  if (/\b(upcoming|planned|scheduled|future|next)\b/i.test(text)) return 'upcoming';
  if (/\b(past|previous|finished|ended|old)\b/i.test(text)) return 'past';
  if (/\ball\b/i.test(text)) return 'all';
  return undefined;
}

/** Task priority: low, medium or high ("urgent" counts as high). */
export function extractPriority(text: string): 'low' | 'medium' | 'high' | undefined {
  const m = text.match(/\b(low|medium|high|urgent|critical)\b(?:\s+priority)?/i);
  if (!m) return undefined;
  const p = m[1].toLowerCase();
  return p === 'urgent' || p === 'critical' ? 'high' : (p as 'low' | 'medium' | 'high');
}

/** A task title: quoted text, or what follows "to"/"for"/"about"/":" in "create a task to …". */
export function extractTaskTitle(text: string): string | undefined {
  const quoted = text.match(/["“']([^"”']{3,})["”']/);
  if (quoted) return quoted[1].trim();
  const m = text.match(/\b(?:task|ticket|todo)\b(?:\s+(?:with\s+)?(?:high|medium|low)\s+priority)?\s*(?::|to|for|about|titled|called|named)\s+(.+)$/i);
  return m ? tidy(m[1].replace(/\s+with\s+(?:high|medium|low)\s+priority$/i, '')) : undefined;
}
