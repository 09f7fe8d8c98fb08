/**
 * A gateway whose TOOLS_FILE names one streamable-HTTP MCP server of the test's own (a recording
 * one, recording-mcp.ts), on a fresh database, signed in through the real @gradio/client: the
 * set-up the MCP chat tests share.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@gradio/client';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { connectChat, login } from './chat-client.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { startRecordingMcp, type RecordingMcp } from './recording-mcp.ts';
import { startTestServer, type TestServer } from './server.ts';

export interface McpGateway {
  db: TestDatabase;
  server: TestServer;
  mcp: RecordingMcp;
  /** Signed in as `user`. */
  client: Client;
  close(): Promise<void>;
}

/** Starts the MCP server `name` (built per request by `build`), then the gateway using it. */
export async function startMcpGateway(name: string, build: () => McpServer, user = 'admin'): Promise<McpGateway> {
  const mcp = await startRecordingMcp(build);
  const dir = await mkdtemp(join(tmpdir(), `airlock-${name}-`));
  const toolsFile = join(dir, 'tools.yaml');
  await writeFile(toolsFile, ['servers:', `  - name: ${name}`, `    url: ${mcp.url}/mcp`].join('\n'));
  const db = await createTestDatabase();
  const server = await startTestServer({ db, env: { TOOLS_FILE: toolsFile } });
  const client = await connectChat(server.url, await login(server.url, user));
  return {
    db, server, mcp, client,
    async close() {
      client.close();
      await server.close();
      await mcp.close();
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
