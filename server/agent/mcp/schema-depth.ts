/**
 * How deeply a tool's input schema nests. A schema nested thousands of levels deep (issue 30,
 * finding 8) overflows every recursive walker downstream (JSON-Schema-to-zod, the model's tool
 * list), so the connection refuses the server before any of them sees it. Measured iteratively:
 * the measure itself must never recurse.
 * @module
 */

/** Deeper than this, a server's tools are refused (its server is marked down with the reason). */
export const MAX_SCHEMA_DEPTH = 64;

/** The nesting depth of a JSON value (a scalar is 0, `{}` is 1), counted only up to `limit + 1`. */
export function jsonDepth(value: unknown, limit = MAX_SCHEMA_DEPTH): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > limit) return deepest;
    for (const child of Object.values(node)) stack.push([child, here]);
  }
  return deepest;
}

/** The first tool whose input (or output) schema nests deeper than `limit`, as a reason; else null. */
export function tooDeepSchema(tools: ReadonlyArray<{ name: string; inputSchema?: unknown; outputSchema?: unknown }>, limit = MAX_SCHEMA_DEPTH): string | null {
  for (const tool of tools) {
    for (const key of ['inputSchema', 'outputSchema'] as const) {
      if (jsonDepth(tool[key], limit) > limit) return `the tool "${tool.name}" has an ${key === 'inputSchema' ? 'input' : 'output'} schema nested deeper than ${limit} levels`;
    }
  }
  return null;
}
