/**
 * Identity to an HTTP MCP server, performed for real: an MCP server written here (the SDK's
 * McpServer + StreamableHTTPServerTransport) records every request's headers. By default a tool
 * call carries the file's static headers and no identity: neither the gateway's service token nor
 * the user's token ever leaves for a tool server (issue 30; mcp-token-replay.test.ts covers the
 * `identity: "token"` opt-in and replays what servers get). The user's token never reaches the
 * model, the events, the transcript, the audit row's arguments or the checkpoints either. A server
 * whose tool name collides with a built-in is marked down with the reason.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@gradio/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chat, collect, connectChat, login, type WireMessage } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startRecordingMcp, type RecordingMcp } from '../helpers/recording-mcp.ts';
import { startTestServer, type TestServer, toolServers } from '../helpers/server.ts';


let db: TestDatabase;
let server: TestServer;
let recording: RecordingMcp;
let admin: Client;
let adminToken: string;
let dir: string;

const meta = (m: WireMessage | undefined) => (m?.metadata ?? {}) as Record<string, unknown>;

/** A fresh stateless MCP server per request (the SDK's documented stateless pattern). */
function mcpServer(path: string): McpServer {
  const mcp = new McpServer({ name: 'ident', version: '1.0.0' });
  if (path.startsWith('/alt')) {
    // Listed as server "ident_who": ident_who + am_i = ident_who_am_i, which "ident" (earlier in the file) holds.
    mcp.registerTool('am_i', { description: 'A clashing tool.', annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'clash' }] }));
    return mcp;
  }
  mcp.registerTool(
    'whoami',
    { description: 'Tell who is calling this identity service.', inputSchema: { note: z.string().optional() }, annotations: { readOnlyHint: true } },
    async () => ({ content: [{ type: 'text', text: 'ident says: nobody told me' }] }),
  );
  mcp.registerTool('who_am_i', { description: 'Another way to ask.', annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'me' }] }));
  mcp.registerTool('health', { description: 'Health of the identity service.', annotations: { readOnlyHint: true } }, async () => ({
    content: [{ type: 'text', text: 'fine' }],
  }));
  return mcp;
}


beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-mcp-ident-'));
  recording = await startRecordingMcp(mcpServer);
  const url = `${recording.url}/mcp`;
  const toolsFile = join(dir, 'tools.yaml');
  await writeFile(
    toolsFile,
    [
      'servers:',
      '  - name: ident',
      `    url: ${url}`,
      '    headers: { X-Tenant: acme }',
      // "check" + "health" = check_health, a built-in tool: this server must be marked down.
      '  - name: check',
      `    url: ${url}`,
      '  - name: ident_who',
      `    url: ${url.replace(/\/mcp$/, '/alt/mcp')}`,
    ].join('\n'),
  );
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { TOOLS_FILE: toolsFile } });
  adminToken = await login(server.url, 'admin');
  admin = await connectChat(server.url, adminToken);
});

afterAll(async () => {
  admin?.close();
  await server?.close();
  await recording?.close();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('identity to an HTTP MCP server', () => {
  it('a name colliding with a built-in tool marks the later server down with the reason', async () => {
    const status = await toolServers(server.url);
    const check = status.servers.find((s: { name: string }) => s.name === 'check');
    expect(check).toMatchObject({ status: 'down', tools: 0, next_retry_at: null });
    expect(check.last_error).toBe('tool name check_health collides with a built-in tool');
    expect(status.servers.find((s: { name: string }) => s.name === 'ident')).toMatchObject({ status: 'up', tools: 3 });
  });

  it("a name colliding with an earlier server's tool marks the later server down, whichever connected first", async () => {
    const status = await toolServers(server.url);
    expect(status.servers.find((s: { name: string }) => s.name === 'ident_who')).toMatchObject({
      status: 'down', tools: 0, last_error: 'tool name ident_who_am_i collides with the server "ident"', next_retry_at: null,
    });
  });

  it('the call carries the static headers and no identity: no Authorization, no X-User-JWT; no token leaks anywhere', async () => {
    const before = recording.seen.length;
    const turn = await collect(chat(admin, 'whoami on the ident service'));
    const end = turn.messages.find((m) => m.metadata.type === 'tool_end');
    expect(meta(end)).toMatchObject({ tool: 'ident_whoami', output: 'ident says: nobody told me' });

    // 1. what the MCP server received with tools/call: the file's header, and nothing of Airlock's
    const call = recording.seen.slice(before).find((s) => s.method === 'tools/call');
    expect(call).toBeDefined();
    expect(call!.headers['x-tenant']).toBe('acme');
    expect(call!.headers.authorization).toBeUndefined();
    expect(call!.headers['x-user-jwt']).toBeUndefined();
    // no request ever carried a JWT (ours all start with a base64url '{"alg":…' header)
    for (const s of recording.seen) for (const value of Object.values(s.headers).flat()) expect(String(value)).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
    expect(JSON.stringify(recording.seen)).not.toContain(adminToken);

    // 2. the user's token is not in the events, the transcript, the audit row or the checkpoints
    const conversationId = turn.messages[0].metadata.conversation_id;
    const wire = JSON.stringify(turn.messages);
    const stored = (await db.pool.query('SELECT content, metadata FROM messages WHERE conversation_id = $1', [conversationId])).rows;
    const audit = (await db.pool.query("SELECT * FROM audit_log WHERE method = 'MCP'")).rows;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ operation: 'ident_whoami', path: 'mcp://ident/whoami', outcome: 'success', username: 'admin', service_actor: 'airlock-gateway' });
    expect(wire).not.toContain(adminToken);
    expect(JSON.stringify(stored)).not.toContain(adminToken);
    expect(JSON.stringify(audit)).not.toContain(adminToken);
    const inCheckpoints = await db.pool.query(
      `SELECT (SELECT count(*) FROM checkpoint_blobs WHERE position(convert_to($1, 'UTF8') in blob) > 0)
            + (SELECT count(*) FROM checkpoint_writes WHERE position(convert_to($1, 'UTF8') in blob) > 0) AS n`,
      [adminToken],
    );
    expect(Number(inCheckpoints.rows[0].n)).toBe(0);
    // the checkpoint does hold the call, so the search above looked in the right place
    const holdsCall = await db.pool.query(`SELECT count(*) AS n FROM checkpoint_writes WHERE position(convert_to('ident_whoami', 'UTF8') in blob) > 0`);
    expect(Number(holdsCall.rows[0].n)).toBeGreaterThan(0);
  });

  it('discovery (initialize, tools/list) sends no identity either: not even the service token', () => {
    const discovery = recording.seen.filter((s) => s.method === 'initialize' || s.method === 'tools/list');
    expect(discovery.length).toBeGreaterThanOrEqual(2);
    for (const s of discovery) {
      expect(s.headers['x-user-jwt']).toBeUndefined();
      expect(s.headers.authorization).toBeUndefined();
    }
  });
});
