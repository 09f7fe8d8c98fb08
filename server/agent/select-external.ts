/**
 * Tool selection for external (MCP) tools, extending seed 003's rule: the keyword rules and their
 * embedding fallback choose among the built-in tools; MCP tools are always candidates besides,
 * ranked by keyword overlap and embedding similarity with the request, the best `topN` offered. So
 * "read the file …" reaches the filesystem server even when the built-in rules already filled the
 * default set, and a server with 50 tools never floods the context.
 * @module
 */
import { cosine } from './offline-model/embeddings.ts';
import { MIN_SIMILARITY, type Embedder, type ToolInfo } from './select-tools.ts';

const STOP = new Set(['the', 'and', 'for', 'with', 'from', 'into', 'that', 'this', 'what', 'please', 'can', 'you', 'me', 'of', 'to', 'a', 'an', 'in', 'on', 'is', 'are', 'mcp', 'server', 'tool']);

/** Content words, lower case, a plural "s" dropped ("files" ~ "file"). */
export function words(text: string): string[] {
  return (text.toLowerCase().match(/[a-z][a-z0-9]+/g) ?? []).filter((w) => !STOP.has(w)).map((w) => (w.length > 3 && w.endsWith('s') ? w.slice(0, -1) : w));
}

/** The share of the query's words found in the tool's name and description (0..1). */
export function keywordScore(query: string, tool: ToolInfo): number {
  const q = [...new Set(words(query))];
  if (q.length === 0) return 0;
  const t = new Set(words(`${tool.name.replace(/_/g, ' ')} ${tool.description}`));
  return q.filter((w) => t.has(w)).length / q.length;
}

const cache = new WeakMap<Embedder, Map<string, number[]>>();

async function similarities(query: string, tools: ToolInfo[], embed: Embedder): Promise<number[]> {
  let known = cache.get(embed);
  if (!known) cache.set(embed, (known = new Map()));
  const key = (t: ToolInfo) => `${t.name}\n${t.description}`;
  const missing = tools.filter((t) => !known.has(key(t)));
  const vectors = await embed([query, ...missing.map((t) => `${t.name.replace(/_/g, ' ')}: ${t.description}`)]);
  missing.forEach((t, i) => known.set(key(t), vectors[i + 1]));
  return tools.map((t) => cosine(vectors[0], known.get(key(t)) ?? []));
}

/**
 * The names of the best `topN` external tools for the query, best first. A tool is related when a
 * query word is in its name or description, or its description embeds close enough to the query.
 */
export async function rankExternalTools(query: string, candidates: ToolInfo[], topN: number, embed?: Embedder): Promise<string[]> {
  if (topN <= 0 || candidates.length === 0) return [];
  let sims = candidates.map(() => 0);
  if (embed) sims = await similarities(query, candidates, embed).catch(() => sims);
  return candidates
    .map((t, i) => ({ name: t.name, keyword: keywordScore(query, t), sim: sims[i] }))
    .filter((s) => s.keyword > 0 || s.sim >= MIN_SIMILARITY)
    .map((s) => ({ name: s.name, score: 0.6 * s.keyword + 0.4 * s.sim }))
    .sort((a, b) => b.score - a.score || a.name.localeCompare(b.name))
    .slice(0, topN)
    .map((s) => s.name);
}
