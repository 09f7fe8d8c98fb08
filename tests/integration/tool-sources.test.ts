/**
 * The ToolSource seam (server/agent/tool-source.ts): the contract suite against the built-in tools
 * (a fake api over HTTP) and an MCP server (the real SDK over streamable HTTP); and a third kind, the
 * in-memory source of tests/helpers, run by the real runtime (the offline model over HTTP,
 * checkpoints in PostgreSQL) with nothing changed elsewhere: offered, paused for approval, resumed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { builtinToolSource, createAgentRuntime, createServiceTokenProvider, McpToolSource, type AgentEvent } from '../../server/agent/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { memoryToolSource, NOTES_WRITE } from '../helpers/memory-tool-source.ts';
import { startRecordingMcp } from '../helpers/recording-mcp.ts';
import { runToolSourceContract } from '../helpers/tool-source-contract.ts';
import { collect, SERVICE_SECRET, shape, startFakeBackend, startOfflineModel } from './agent-fixtures.ts';

const user = { id: 'u1', username: 'alice', tenant: 'demo' };

runToolSourceContract('builtin', async () => {
  const backend = await startFakeBackend();
  const serviceToken = createServiceTokenProvider({ apiUrl: () => backend.url, credentials: { clientId: 'airlock-gateway', clientSecret: SERVICE_SECRET } });
  return {
    source: builtinToolSource(),
    sample: { tool: 'check_health', args: { service: 'payments-api' } },
    run: { apiUrl: backend.url, userToken: 'user-admin', user, conversationId: 'c1', serviceToken, timeoutMs: 5_000, fetch },
    close: () => backend.app.close(),
  };
});

runToolSourceContract('mcp', async () => {
  const server = await startRecordingMcp(() => {
    const mcp = new McpServer({ name: 'echoes', version: '1.0.0' });
    mcp.registerTool('echo', { description: 'Echo the text back.', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    return mcp;
  });
  const dir = await mkdtemp(join(tmpdir(), 'tool-source-'));
  await writeFile(join(dir, 'tools.yaml'), `servers:\n  - name: echoes\n    url: ${server.url}/mcp\n`);
  const source = new McpToolSource({ file: join(dir, 'tools.yaml'), timeoutMs: 5_000, resultMaxChars: 10_000, reservedNames: [] });
  await source.start();
  await source.settled();
  const serviceToken = createServiceTokenProvider({ apiUrl: () => 'http://127.0.0.1:9', credentials: { clientId: 'x', clientSecret: 'y' } });
  return {
    source,
    sample: { tool: 'echoes_echo', args: { text: 'hi' } },
    run: { apiUrl: 'http://127.0.0.1:9', userToken: 'unused', user, conversationId: 'c1', serviceToken, timeoutMs: 5_000, fetch },
    close: async () => {
      await source.close();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe('a third kind of source, run by the runtime unchanged', () => {
  let db: TestDatabase;
  let saver: PostgresSaver;
  let model: Awaited<ReturnType<typeof startOfflineModel>>;
  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    saver = PostgresSaver.fromConnString(db.url, { schema: db.schema });
    await saver.setup();
    model = await startOfflineModel(0);
  });
  afterAll(async () => {
    await saver?.end();
    await model?.app.close();
    await db?.drop();
  });

  it('offers its tool, pauses it for approval (its default) and runs it once confirmed', async () => {
    const memory = memoryToolSource([NOTES_WRITE]);
    const agent = await createAgentRuntime({
      model: { baseUrl: model.baseUrl, apiKey: 'offline', name: 'airlock-offline-1', timeoutMs: 5_000, maxRetries: 1 },
      apiUrl: () => 'http://127.0.0.1:9',
      serviceCredentials: { clientId: 'x', clientSecret: 'y' },
      checkpointer: saver,
      sources: [memory],
    });
    const threadId = `memory-${Date.now()}`;
    const turn = { threadId, userToken: 'user-admin', conversationId: 'conv-memory' };
    model.offered.length = 0;
    const first = await collect(agent.run({ ...turn, text: 'write a note saying the deploy is done' }));
    expect(model.offered[0]).toEqual(['notes_write']);
    expect(shape(first)).toEqual(['approval_required']);
    expect(memory.calls).toEqual([]);
    const [pending] = (first.at(-1) as Extract<AgentEvent, { type: 'approval_required' }>).approvals;
    expect(pending).toMatchObject({ tool: 'notes_write', policy: { action: 'require_approval' } });
    const second = await collect(agent.resume({ ...turn, decisions: { [pending.interruptId]: { approved: true } } }));
    expect(shape(second).slice(0, 2)).toEqual(['tool_start', 'tool_end']);
    expect(memory.calls).toHaveLength(1);
    expect(memory.calls[0]).toMatchObject({ tool: 'notes_write', user: null });
  });
});
