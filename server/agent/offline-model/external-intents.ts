/**
 * The offline model's phrasing for tools it does not know by name (MCP tools): the tool is found
 * from its name's words ("read the file /srv/notes/readme.txt" -> `filesystem_read_file`), the
 * arguments from its JSON schema (paths, the text to write, enum values, numbers). Pure.
 *
 * A tool qualifies when one of its name's verbs is in the request (or, for a name without a verb,
 * two of its words are); the best has the most name words in the request, then the fewest left over.
 * @module
 */
import type { Intent, ToolArgs } from './intents.ts';

/** A tool offered in the request, with its JSON schema. */
export interface SchemaTool {
  name: string;
  parameters?: { required?: string[]; properties?: Record<string, unknown> };
}

/** Verbs and the words a request may use for them. */
const VERBS: Record<string, string[]> = {
  read: ['read', 'show', 'cat', 'open', 'print', 'display'],
  write: ['write', 'save', 'store'],
  list: ['list', 'ls'],
  search: ['search', 'find'],
  get: ['get', 'fetch', 'give'],
  create: ['create', 'make', 'add'],
  edit: ['edit', 'change', 'modify'],
  move: ['move', 'rename'],
  delete: ['delete', 'remove'],
  echo: ['echo', 'repeat'],
  trigger: ['trigger', 'run', 'start'],
};

function singular(w: string): string {
  if (w.endsWith('ies') && w.length > 4) return `${w.slice(0, -3)}y`;
  if (w.endsWith('s') && !w.endsWith('ss') && w.length > 3) return w.slice(0, -1);
  return w;
}

/** The request's words, lower case and singular, paths left out ("/srv/notes" is not a word). */
export function requestWords(text: string): Set<string> {
  const noPaths = text.replace(/(?:~|\.{0,2})\/[^\s"'`]*/g, ' ');
  return new Set((noPaths.toLowerCase().match(/[a-z][a-z0-9]*/g) ?? []).map(singular));
}

function score(tool: SchemaTool, said: Set<string>): { matched: number; unmatched: number } | null {
  const tokens = tool.name.split('_').filter(Boolean).map(singular);
  const verbs = tokens.filter((t) => t in VERBS);
  const matched = tokens.filter((t) => said.has(t) || (t in VERBS && VERBS[t].some((w) => said.has(w)))).length;
  // A verb in the name must be said; a name without one ("ident_whoami") needs two of its words.
  const qualifies = verbs.length ? verbs.some((v) => VERBS[v].some((w) => said.has(w))) : matched >= 2;
  return qualifies ? { matched, unmatched: tokens.length - matched } : null;
}

const PATH_FIELDS = /^(path|file|filename|file_path|filepath|dir|directory|folder|source|destination|target|uri)$/i;
const TEXT_FIELDS = /^(content|contents|text|message|data|body|value|prompt)$/i;
const QUERY_FIELDS = /^(query|pattern|q|search|term|topic|keyword|keywords)$/i;

/** Absolute or home-relative paths in the order they appear. */
export function extractPaths(text: string): string[] {
  return (text.match(/(?:~|\.{0,2})\/[^\s"'`,;]+/g) ?? []).map((p) => p.replace(/[.!?]+$/, ''));
}

/** "write hello world to /x" -> "hello world"; a quoted phrase wins. */
export function extractPayload(text: string): string | undefined {
  const quoted = text.match(/["“']([^"”']+)["”']/);
  if (quoted) return quoted[1];
  const between = text.match(/\b(?:write|save|store|echo|repeat|say|append|put)\s+(.+?)(?:\s+(?:to|into|in|at)\s+(?:the\s+file\s+)?(?:~|\.{0,2})\/\S+.*)?$/i);
  return between?.[1]?.replace(/^(?:the\s+(?:text|words?|message)\s+)/i, '').trim() || undefined;
}

function extractQuery(text: string): string | undefined {
  const m = text.match(/\b(?:for|about|matching|named|called)\s+(.+?)(?:\s+(?:in|under|inside)\s+(?:~|\.{0,2})\/\S+.*)?$/i);
  return m?.[1]?.replace(/[.!?]+$/, '').trim() || undefined;
}

function numberFor(name: string, text: string, used: Set<string>): number | undefined {
  const near = text.match(new RegExp(`\\b${name}\\s*(?:=|:|of|is)?\\s*(-?\\d+(?:\\.\\d+)?)`, 'i')) ?? text.match(new RegExp(`(-?\\d+(?:\\.\\d+)?)\\s+${name}\\b`, 'i'));
  if (near) return Number(near[1]);
  const free = (text.replace(/(?:~|\.{0,2})\/\S+/g, ' ').match(/-?\b\d+(?:\.\d+)?\b/g) ?? []).find((n) => !used.has(n));
  if (free === undefined) return undefined;
  used.add(free);
  return Number(free);
}

/** The arguments the request gives for the tool's schema (missing ones stay absent). */
export function argsFor(tool: SchemaTool, text: string): ToolArgs {
  const props = (tool.parameters?.properties ?? {}) as Record<string, { type?: string | string[]; enum?: unknown[] }>;
  const required = new Set(tool.parameters?.required ?? []);
  const paths = extractPaths(text);
  const usedNumbers = new Set<string>();
  const args: ToolArgs = {};
  for (const [name, schema] of Object.entries(props)) {
    const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
    if (Array.isArray(schema?.enum)) {
      const hit = schema.enum.find((v) => typeof v === 'string' && text.toLowerCase().includes(v.toLowerCase()));
      if (hit !== undefined) args[name] = hit as string;
    } else if (type === 'number' || type === 'integer') {
      const n = required.has(name) || new RegExp(`\\b${name}\\b`, 'i').test(text) ? numberFor(name, text, usedNumbers) : undefined;
      if (n !== undefined) args[name] = type === 'integer' ? Math.round(n) : n;
    } else if (type === 'string' || type === undefined) {
      const value = PATH_FIELDS.test(name) ? paths.shift() : TEXT_FIELDS.test(name) ? extractPayload(text) : QUERY_FIELDS.test(name) ? extractQuery(text) : undefined;
      if (value !== undefined) args[name] = value;
    }
  }
  return args;
}

/** The external tool the request asks for, with its arguments; null when none fits. */
export function parseExternalIntent(text: string, tools: SchemaTool[]): (Intent & { matched: number }) | null {
  const said = requestWords(text);
  let best: { tool: SchemaTool; matched: number; unmatched: number } | null = null;
  for (const tool of tools) {
    const s = score(tool, said);
    if (!s) continue;
    if (!best || s.matched > best.matched || (s.matched === best.matched && s.unmatched < best.unmatched)) best = { tool, ...s };
  }
  return best ? { tool: best.tool.name, args: argsFor(best.tool, text), matched: best.matched } : null;
}
