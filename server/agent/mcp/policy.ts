/**
 * What happens to an MCP tool call before it runs, from the tool's annotations (MCP spec,
 * ToolAnnotations): the one place the mapping lives, so a policy file (seed 000's tool policy)
 * can rank its rules above it.
 *
 *   policy rule (user -> tenant -> tool), when one matches   -> its action
 *   else the annotations:
 *     readOnlyHint: true                                     -> allow
 *     destructiveHint: true, or absent (the MCP default)     -> require_approval
 *     otherwise (not read-only, destructiveHint: false)      -> caution (runs, audited as such)
 * @module
 */

/** Seed 000's policy actions. */
export type ToolAction = 'allow' | 'caution' | 'require_approval' | 'deny';

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

/** The action for one MCP tool call: a matching policy rule wins, else the annotation default. */
export function mcpToolAction({ rule, annotations }: { rule?: ToolAction | null; annotations?: ToolAnnotationHints }): ToolAction {
  return rule ?? annotationAction(annotations);
}
