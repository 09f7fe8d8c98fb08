import { describe, expect, it } from 'vitest';
import { firstCollision, mcpToolName, sanitizeName } from '../../../../../server/agent/mcp/names.ts';

describe('MCP tool names', () => {
  const rows: Array<[server: string, tool: string, expected: string]> = [
    ['filesystem', 'read_file', 'filesystem_read_file'],
    ['pska', 'pska_search', 'pska_pska_search'],
    ['everything', 'get-structured-content', 'everything_get_structured_content'],
    ['My Server!', 'Do.This--Now', 'my_server_do_this_now'],
    ['__x__', 'ÄÖ tool', 'x_tool'],
  ];
  it.each(rows)('%s + %s -> %s', (server, tool, expected) => {
    expect(mcpToolName(server, tool)).toBe(expected);
    expect(mcpToolName(server, tool)).toMatch(/^[a-z0-9_]+$/);
  });

  it('caps names at 64 characters (the model APIs limit)', () => {
    expect(mcpToolName('s', 'x'.repeat(100))).toHaveLength(64);
  });

  it('sanitizes to [a-z0-9_] with no leading or trailing underscores', () => {
    expect(sanitizeName('--Hello World--')).toBe('hello_world');
    expect(sanitizeName('***')).toBe('');
  });

  it('finds the first name taken elsewhere or twice within the server', () => {
    expect(firstCollision(['a_b', 'a_c'], new Set(['check_health']))).toBeNull();
    expect(firstCollision(['a_b', 'check_health'], new Set(['check_health']))).toBe('check_health');
    expect(firstCollision(['a_b', 'a_c', 'a_b'], new Set())).toBe('a_b');
  });
});
