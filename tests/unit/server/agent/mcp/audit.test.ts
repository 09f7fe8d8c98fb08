import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { mcpAuditEntry, type McpCallOutcome } from '../../../../../server/agent/mcp/audit.ts';

const key = new TextEncoder().encode('k'.repeat(32));
const sign = (claims: Record<string, unknown>, sub: string) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).sign(key);

describe('mcpAuditEntry — one row per call, the api audit shape', () => {
  const rows: Array<[result: McpCallOutcome, outcome: string, status: number]> = [
    ['success', 'success', 200],
    ['refused', 'denied', 403],
    ['not_approved', 'denied', 403],
    ['failed', 'error', 502],
  ];
  it.each(rows)('%s -> outcome %s, status %d', async (result, outcome, status) => {
    const userToken = await sign({ username: 'ada', role: 'operator' }, '6f1c2a6e-0000-4000-8000-000000000001');
    const serviceToken = await sign({}, 'airlock-gateway');
    const entry = mcpAuditEntry({
      server: 'fs', tool: 'write_file', name: 'fs_write_file', args: { path: '/x' }, result, decision: { action: 'require_approval', scope: 'builtin', matched: false }, errorCode: null,
      userToken, serviceToken, toolCallId: 'call_1', conversationId: 'c1', durationMs: 12.6,
    });
    expect(entry).toEqual({
      serviceActor: 'airlock-gateway', userId: '6f1c2a6e-0000-4000-8000-000000000001', username: 'ada', userRole: 'operator',
      operation: 'fs_write_file', method: 'MCP', path: 'mcp://fs/write_file', arguments: { path: '/x' }, outcome, statusCode: status,
      errorCode: null, toolCallId: 'call_1', conversationId: 'c1', durationMs: 13, policyAction: 'require_approval', policyScope: 'builtin', policyMatched: false,
    });
    // the row never holds a token
    expect(JSON.stringify(entry)).not.toContain(userToken);
    expect(JSON.stringify(entry)).not.toContain(serviceToken);
  });

  it('an unreadable token leaves the identity fields empty rather than failing the call', () => {
    const entry = mcpAuditEntry({ server: 's', tool: 't', name: 's_t', args: {}, result: 'success', decision: { action: 'allow', scope: 'builtin', matched: false }, userToken: 'garbage', toolCallId: 'x', conversationId: 'c', durationMs: null });
    expect(entry).toMatchObject({ userId: null, username: null, serviceActor: 'airlock-gateway', durationMs: null });
  });
});
