/**
 * Tool selection for the context budget (seed 003, "Tool Schema Context Budget"): keyword rules per
 * intent first; when they give fewer than 3 tools, an embedding fallback ranks the other tools'
 * descriptions by cosine similarity to the query. show_capabilities is always in.
 * @module
 */
import { cosine } from './offline-model/embeddings.ts';

/** Embeds texts (OpenAI-compatible `/embeddings`, or the local hashed bag of words). */
export type Embedder = (texts: string[]) => Promise<number[][]>;

export interface ToolInfo {
  name: string;
  description: string;
}

export const MIN_TOOLS = 3;
/** Below this similarity a tool is not related enough to be offered. */
export const MIN_SIMILARITY = 0.15;

interface IntentRule {
  intent: string;
  test: RegExp;
  tools: string[];
}

/** Keyword rules, one per intent. */
export const INTENT_RULES: IntentRule[] = [
  { intent: 'capabilities', test: /\b(help|what can you|what do you|capabilit\w*|what tools|which tools|permissions?|allowed)\b/i, tools: ['show_capabilities'] },
  { intent: 'dashboards', test: /\b(dashboards?|graphs?|charts?|panels?|metrics)\b/i, tools: ['search_dashboards', 'get_dashboard'] },
  { intent: 'maintenance', test: /\b(maintenance|maint|downtime window|maintenance window)\b/i, tools: ['list_maintenance_events', 'start_maintenance', 'end_maintenance'] },
  { intent: 'deployments', test: /\b(deploy\w*|releases?|roll ?out|roll ?back|ship)\b/i, tools: ['list_deployments', 'deploy_service'] },
  { intent: 'health', test: /\b(health\w*|up|down|outage|status|latency|errors?|alive|uptime)\b/i, tools: ['check_health'] },
  { intent: 'environment', test: /\b(environments?|env|staging|production|prod|cluster|region)\b/i, tools: ['get_environment'] },
  { intent: 'tasks', test: /\b(tasks?|tickets?|todo|follow[- ]?up)\b/i, tools: ['create_task'] },
];

/** The seed's "Unknown/general" default set. */
export const DEFAULT_TOOLS = ['search_dashboards', 'check_health', 'get_environment', 'create_task'];

/** Intents whose keyword rule matches the query. */
export function matchIntents(query: string): string[] {
  return INTENT_RULES.filter((r) => r.test.test(query)).map((r) => r.intent);
}

const descriptionCache = new WeakMap<Embedder, Map<string, number[]>>();

async function rankByEmbedding(query: string, candidates: ToolInfo[], embed: Embedder): Promise<string[]> {
  let cache = descriptionCache.get(embed);
  if (!cache) descriptionCache.set(embed, (cache = new Map()));
  const missing = candidates.filter((t) => !cache.has(t.name));
  const vectors = await embed([query, ...missing.map((t) => `${t.name.replace(/_/g, ' ')}: ${t.description}`)]);
  missing.forEach((t, i) => cache.set(t.name, vectors[i + 1]));
  const q = vectors[0];
  return candidates
    .map((t) => ({ name: t.name, score: cosine(q, cache.get(t.name) ?? []) }))
    .filter((s) => s.score >= MIN_SIMILARITY)
    .sort((a, b) => b.score - a.score)
    .map((s) => s.name);
}

/**
 * The names of the tools to offer the model for this query, in catalog order.
 * @param prefetchAvailable dashboards are already in context, so search_dashboards is left out
 * @example await getToolsForQuery('start maintenance on db-primary', false) // 4 maintenance tools
 */
export async function getToolsForQuery(query: string, prefetchAvailable: boolean, embed?: Embedder, catalog: ToolInfo[] = []): Promise<string[]> {
  const intents = matchIntents(query);
  const selected = new Set<string>(['show_capabilities']);
  for (const rule of INTENT_RULES) if (intents.includes(rule.intent)) rule.tools.forEach((t) => selected.add(t));
  if (intents.length === 0) DEFAULT_TOOLS.forEach((t) => selected.add(t));
  if (prefetchAvailable) selected.delete('search_dashboards');
  else if (intents.includes('dashboards')) selected.add('search_dashboards');

  if (selected.size < MIN_TOOLS && embed) {
    const candidates = catalog.filter((t) => !selected.has(t.name) && !(prefetchAvailable && t.name === 'search_dashboards'));
    try {
      for (const name of await rankByEmbedding(query, candidates, embed)) {
        if (selected.size >= MIN_TOOLS) break;
        selected.add(name);
      }
    } catch {
      // The fallback is best effort: the keyword choice stands if embeddings are unavailable.
    }
  }
  const order = catalog.map((t) => t.name);
  return [...selected].sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99));
}

/** One message, reduced to what the selection reads. */
export interface Turn {
  role: 'user' | 'assistant' | 'tool' | 'system';
  text: string;
  hasToolCalls?: boolean;
}

/**
 * The query to select tools for: the last user message, joined with the one before it when the
 * assistant's reply in between was a question ("deploy checkout-api" -> "which version?" -> "2.4.1
 * to staging" must still offer deploy_service).
 */
export function selectionQuery(turns: Turn[]): string {
  const userIdx = turns.map((t, i) => (t.role === 'user' ? i : -1)).filter((i) => i >= 0);
  const last = userIdx.at(-1);
  if (last === undefined) return '';
  const before = turns[last - 1];
  const previous = userIdx.at(-2);
  if (previous !== undefined && before?.role === 'assistant' && !before.hasToolCalls && before.text.trim().endsWith('?')) {
    return `${turns[previous].text} ${turns[last].text}`;
  }
  return turns[last].text;
}
