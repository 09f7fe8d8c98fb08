/**
 * Tool names the model sees for MCP tools: `<server>_<tool>` (seed 000's convention, e.g.
 * `pska_pska_search`), sanitized to [a-z0-9_] so every model API accepts them, at most 64 chars.
 * @module
 */

/** Lower case, every run of other characters becomes one underscore, no leading/trailing underscores. */
export function sanitizeName(raw: string): string {
  return raw.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
}

/** The model-facing name of a server's tool (OpenAI allows 64 characters). */
export function mcpToolName(server: string, tool: string): string {
  return `${sanitizeName(server)}_${sanitizeName(tool)}`.slice(0, 64);
}

/**
 * The first name of `names` that is already taken (by a built-in tool or another server's tool),
 * or that two tools of this server share after sanitizing; null when all are free.
 */
export function firstCollision(names: string[], taken: ReadonlySet<string>): string | null {
  const seen = new Set<string>();
  for (const n of names) {
    if (taken.has(n) || seen.has(n)) return n;
    seen.add(n);
  }
  return null;
}
