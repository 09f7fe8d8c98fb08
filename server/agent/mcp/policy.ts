/**
 * An MCP tool's built-in default action, from its annotations (MCP spec, ToolAnnotations): the
 * lowest rank of the tool policy (server/policy), below every rule of POLICY_FILE.
 *
 *   readOnlyHint: true                                     -> allow
 *   destructiveHint: true, or absent (the MCP default)     -> require_approval
 *   otherwise (not read-only, destructiveHint: false)      -> caution (runs, audited as such)
 * @module
 */
import type { ToolAction } from '../../policy/index.ts';

export type { ToolAction };

export interface ToolAnnotationHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** The default action the annotations give (ranks below any policy rule, above `default_action`). */
export function annotationAction(annotations: ToolAnnotationHints | undefined): ToolAction {
  if (annotations?.readOnlyHint === true) return 'allow';
  if (annotations?.destructiveHint === false) return 'caution';
  return 'require_approval';
}
