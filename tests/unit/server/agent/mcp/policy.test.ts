import { describe, expect, it } from 'vitest';
import { annotationAction, type ToolAction, type ToolAnnotationHints } from '../../../../../server/agent/mcp/policy.ts';
import { decideToolPolicy, PolicyRulesSchema } from '../../../../../server/policy/index.ts';

describe('annotationAction — the MCP annotation mapping, row by row', () => {
  const rows: Array<[row: string, annotations: ToolAnnotationHints | undefined, expected: ToolAction]> = [
    ['no annotations (MCP default destructiveHint: true)', undefined, 'require_approval'],
    ['empty annotations', {}, 'require_approval'],
    ['destructiveHint true', { destructiveHint: true }, 'require_approval'],
    ['not read-only, destructive (write_file)', { readOnlyHint: false, destructiveHint: true, idempotentHint: true }, 'require_approval'],
    ['not read-only, destructiveHint absent', { readOnlyHint: false }, 'require_approval'],
    ['readOnlyHint true (read_file)', { readOnlyHint: true, openWorldHint: false }, 'allow'],
    ['readOnlyHint wins over a contradictory destructiveHint', { readOnlyHint: true, destructiveHint: true }, 'allow'],
    ['not read-only, not destructive (create_directory)', { readOnlyHint: false, destructiveHint: false }, 'caution'],
    ['destructiveHint false alone', { destructiveHint: false }, 'caution'],
  ];
  it.each(rows)('%s', (_row, annotations, expected) => {
    expect(annotationAction(annotations)).toBe(expected);
  });
});

describe('a policy rule naming the MCP tool ranks above its annotations', () => {
  const rows: Array<[rule: ToolAction | null, annotations: ToolAnnotationHints, expected: ToolAction]> = [
    [null, { readOnlyHint: true }, 'allow'],
    [null, { destructiveHint: true }, 'require_approval'],
    ['deny', { readOnlyHint: true }, 'deny'],
    ['allow', { destructiveHint: true }, 'allow'],
    ['require_approval', { readOnlyHint: true }, 'require_approval'],
  ];
  it.each(rows)('rule %s over %j -> %s', (rule, annotations, expected) => {
    const rules = PolicyRulesSchema.parse({ tool_rules: rule ? { fs_tool: rule } : {} });
    expect(decideToolPolicy(rules, { tenant: 'demo', username: 'a' }, 'fs_tool', annotationAction(annotations)).action).toBe(expected);
  });
});
