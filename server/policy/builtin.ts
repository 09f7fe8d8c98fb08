/**
 * The built-in default of a tool, the lowest rank of the policy: the catalog's operations that
 * declare an approval need it; other catalog operations are read-only and allowed. MCP tools get
 * theirs from their annotations (agent/mcp/policy.ts); a tool nobody declares needs approval (a
 * name the policy check is asked about, such as the seed's `exec`, is treated as dangerous).
 * @module
 */
import { findToolSpec } from '../operations/index.ts';
import type { ToolAction } from './types.ts';

/** The catalog's default for `tool`, or undefined when the catalog does not declare it. */
export function catalogDefault(tool: string): ToolAction | undefined {
  const spec = findToolSpec(tool);
  if (!spec) return undefined;
  return spec.approval ? 'require_approval' : 'allow';
}

/** The default of a tool no table declares. */
export const UNKNOWN_TOOL_DEFAULT: ToolAction = 'require_approval';

