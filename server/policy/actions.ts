/**
 * Seed 000's four tool actions, least to most strict: the leaf that the rule shapes (rule.ts) and
 * the policy types (types.ts) both stand on.
 * @module
 */
export const TOOL_ACTIONS = ['allow', 'caution', 'require_approval', 'deny'] as const;
export type ToolAction = (typeof TOOL_ACTIONS)[number];
