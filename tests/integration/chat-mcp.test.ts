/**
 * Issue 13: Gradio's MCP server at /api/agent/gradio/gradio_api/mcp/ with the real MCP TypeScript
 * client (@modelcontextprotocol/sdk), against the real app and PostgreSQL: list the `chat` tool,
 * call it into an approval pause, confirm through a second call, and the attacks (no token;
 * another user posting into an SSE session).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { v1 } from './v1-support.ts';

let db: TestDatabase;
let server: TestServer;
let mcpUrl: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db });
  mcpUrl = `${server.url}/api/agent/gradio/gradio_api/mcp/`;
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'airlock-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

const deployments = async (service: string, version: string) =>
  Number((await db.pool.query('SELECT count(*) FROM deployments WHERE service = $1 AND version = $2', [service, version])).rows[0].count);

type ToolResult = { content: { type: string; text: string }[]; structuredContent?: { result: any[] }; isError?: boolean };

describe('MCP server (streamable HTTP)', () => {
  it('lists chat with message, conversation_id, action and approval_id', async () => {
    const client = await connect(await login(server.url, 'admin'));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['chat']);
    expect(Object.keys(tools[0].inputSchema.properties ?? {})).toEqual(['message', 'conversation_id', 'action', 'approval_id']);
    expect((tools[0].inputSchema.properties as any).message.type).toBe('string');
    await client.close();
  });

  it('a deploy pauses with a result naming the action, the ids and how to confirm; a confirm call resumes it once', async () => {
    const client = await connect(await login(server.url, 'admin'));
    const paused = (await client.callTool({ name: 'chat', arguments: { message: 'deploy checkout-api 2.4.1 to staging' } })) as ToolResult;
    expect(paused.isError).toBeFalsy();
    const message = paused.structuredContent!.result[0];
    expect(message.metadata.type).toBe('confirm_required');
    const { approval_id: approvalId, conversation_id: conversationId } = message.metadata;
    expect(paused.content[0].text).toContain('deploy_service');
    expect(paused.content[0].text).toContain(`approval_id "${approvalId}"`);
    expect(paused.content[0].text).toContain(`conversation_id "${conversationId}"`);
    expect(paused.content[0].text).toMatch(/action "confirm"/);
    expect(await deployments('checkout-api', '2.4.1')).toBe(0);

    const done = (await client.callTool({
      name: 'chat',
      arguments: { message: 'confirm', conversation_id: conversationId, action: 'confirm', approval_id: approvalId },
    })) as ToolResult;
    expect(done.isError).toBeFalsy();
    expect(done.content[0].text.length).toBeGreaterThan(0);
    expect(await deployments('checkout-api', '2.4.1')).toBe(1);
    // Decided over MCP, recorded as `mcp` (issue 26), not `chat`: the decision, its audit row and its receipt.
    const decided = await db.pool.query(`SELECT channel FROM approval_decisions WHERE approval_id = $1`, [approvalId]);
    expect(decided.rows).toEqual([{ channel: 'mcp' }]);
    const audited = await db.pool.query(`SELECT arguments->>'channel' AS channel FROM audit_log WHERE operation = 'approval.approve' AND arguments->>'approval_id' = $1`, [approvalId]);
    expect(audited.rows).toEqual([{ channel: 'mcp' }]);
    const receipt = await v1(server.url, `/approvals/${approvalId}/receipt`, { token: await login(server.url, 'admin') });
    expect(JSON.parse(Buffer.from(receipt.body.receipt.split('.')[1], 'base64url').toString()).approvers).toEqual([{ user: 'admin', decided_at: expect.any(String), channel: 'mcp' }]);

    // The same confirm again decides nothing and deploys nothing: a tool error with the code.
    const again = (await client.callTool({
      name: 'chat',
      arguments: { message: 'confirm', conversation_id: conversationId, action: 'confirm', approval_id: approvalId },
    })) as ToolResult;
    expect(again.isError).toBe(true);
    expect(again.content[0].text).toMatch(/^APPROVAL_NOT_FOUND: /);
    expect(await deployments('checkout-api', '2.4.1')).toBe(1);
    await client.close();
  });

  it('a client asking for progress gets the log messages (a tool started) as progress notifications', async () => {
    const client = await connect(await login(server.url, 'admin'));
    const progress: { progress: number; message?: string }[] = [];
    const result = (await client.callTool({ name: 'chat', arguments: { message: "what's the health of payments-api" } }, undefined, {
      onprogress: (p) => void progress.push({ progress: p.progress, message: p.message }),
    })) as ToolResult;
    expect(result.isError).toBeFalsy();
    expect(progress).toContainEqual({ progress: 1, message: 'Running check_health…' });
    await client.close();
  });

  it('bad arguments are a tool error, not a crash', async () => {
    const client = await connect(await login(server.url, 'admin'));
    const typo = (await client.callTool({ name: 'chat', arguments: { mesage: 'hi' } })) as ToolResult;
    expect(typo).toMatchObject({ isError: true });
    expect(typo.content[0].text).toMatch(/Unknown parameter\(s\) for \/chat: mesage/);
    const action = (await client.callTool({ name: 'chat', arguments: { message: 'x', action: 'launch' } })) as ToolResult;
    expect(action).toMatchObject({ isError: true });
    expect(action.content[0].text).toMatch(/^VALIDATION_ERROR: action: action must be/);
    // The code is named once (issue 24 item 2: it read `VALIDATION_ERROR: VALIDATION_ERROR: …`).
    expect(action.content[0].text.match(/VALIDATION_ERROR/g)).toHaveLength(1);
    await client.close();
  });

  it('resources/list, resources/templates/list and prompts/list answer empty lists, as upstream (they were -32601)', async () => {
    const client = await connect(await login(server.url, 'viewer'));
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {} });
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    expect((await client.listPrompts()).prompts).toEqual([]);
    await client.close();
  });

  it('?tools= limits the tools listed and callable, as upstream (on the streamable URL and the SSE opener)', async () => {
    const token = await login(server.url, 'admin');
    const at = async (query: string) => {
      const client = new Client({ name: 'filtered', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${mcpUrl}${query}`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      return client;
    };
    const chosen = await at('?tools=chat');
    expect((await chosen.listTools()).tools.map((t) => t.name)).toEqual(['chat']);
    await chosen.close();
    const other = await at('?tools=image_generator,summarize');
    expect((await other.listTools()).tools).toEqual([]);
    const refused = (await other.callTool({ name: 'chat', arguments: { message: 'hello' } })) as ToolResult;
    expect(refused).toMatchObject({ isError: true });
    expect(refused.content[0].text).toBe("Error: Tool 'chat' is not in the selected tools list");
    await other.close();

    const auth = { Authorization: `Bearer ${token}` };
    const sse = new SSEClientTransport(new URL(`${mcpUrl}sse?tools=summarize`), {
      requestInit: { headers: auth },
      eventSourceInit: { fetch: (url: string | URL, init?: RequestInit) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...auth } }) },
    });
    const sseClient = new Client({ name: 'sse-filtered', version: '1.0.0' });
    await sseClient.connect(sse);
    expect((await sseClient.listTools()).tools).toEqual([]);
    await sseClient.close();
  });

  it('refuses a caller without a token (401) and serves /schema', async () => {
    const client = new Client({ name: 'anon', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)))).rejects.toThrow(/401|Not authenticated/);
    const schema = await fetch(`${mcpUrl}schema`, { headers: { authorization: `Bearer ${await login(server.url, 'viewer')}` } });
    expect(await schema.json()).toMatchObject([{ name: 'chat', meta: { mcp_type: 'tool', endpoint_name: 'chat' } }]);
  });
});

describe('MCP server (SSE transport, upstream /sse + /messages/)', () => {
  it('lists and calls chat; another user cannot post into the session', async () => {
    const adminToken = await login(server.url, 'admin');
    const withToken = (token: string) => ({
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
      eventSourceInit: { fetch: (url: string | URL, init?: RequestInit) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${token}` } }) },
    });
    const transport = new SSEClientTransport(new URL(`${mcpUrl}sse`), withToken(adminToken));
    const client = new Client({ name: 'sse', version: '1.0.0' });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['chat']);
    const result = (await client.callTool({ name: 'chat', arguments: { message: 'hello there' } })) as ToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.content[0].text.length).toBeGreaterThan(0);

    // The attack: the viewer posts a tools/call into the admin's session by its id.
    // The session's POST address, as the server announced it in its `endpoint` event.
    const endpoint = (transport as unknown as { _endpoint: URL })._endpoint;
    expect(endpoint.pathname).toBe('/api/agent/gradio/gradio_api/mcp/messages/');
    expect(endpoint.searchParams.get('sessionId')).toMatch(/^[0-9a-f-]{36}$/);
    const post = (token: string, id: number) =>
      fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: {} }),
      });
    const stolen = await post(await login(server.url, 'viewer'), 99);
    expect(stolen.status).toBe(404);
    expect(await stolen.json()).toEqual({ detail: 'Session not found.' });
    // Control: the same address works for its owner.
    expect((await post(adminToken, 100)).status).toBe(202);
    await client.close();
  });
});

describe('MCP SSE sessions are capped per user', () => {
  it('the 9th open session of one user is a 429; another user still gets one', async () => {
    const controller = new AbortController();
    const open = async (token: string) => fetch(`${mcpUrl}sse`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
    const admin = await login(server.url, 'admin');
    const held = [];
    for (let i = 0; i < 8; i++) held.push(await open(admin));
    expect(held.map((r) => r.status)).toEqual(Array(8).fill(200));
    const ninth = await open(admin);
    expect(ninth.status).toBe(429);
    expect(await ninth.json()).toEqual({ detail: 'At most 8 MCP SSE sessions per user; close one first.' });
    const other = await open(await login(server.url, 'viewer'));
    expect(other.status).toBe(200);
    controller.abort();
    // Closed streams free their places.
    await expect.poll(async () => {
      const again = await fetch(`${mcpUrl}sse`, { headers: { authorization: `Bearer ${admin}` }, signal: AbortSignal.timeout(2000) }).catch(() => null);
      const status = again?.status;
      await again?.body?.cancel().catch(() => {});
      return status;
    }, { timeout: 5000 }).toBe(200);
  });
});

describe('MCP elicitation (SSE transport, a client that supports it)', () => {
  const sseClient = async (token: string, answer: (message: string) => { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }) => {
    const client = new Client({ name: 'elicit', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return answer(request.params.message);
    });
    const auth = { Authorization: `Bearer ${token}` };
    await client.connect(
      new SSEClientTransport(new URL(`${mcpUrl}sse`), {
        requestInit: { headers: auth },
        eventSourceInit: { fetch: (url: string | URL, init?: RequestInit) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...auth } }) },
      }),
    );
    return { client, asked };
  };

  it('a paused deploy asks the user; "confirm" runs it within the same tool call', async () => {
    const { client, asked } = await sseClient(await login(server.url, 'admin'), () => ({ action: 'accept', content: { decision: 'confirm' } }));
    const result = (await client.callTool({ name: 'chat', arguments: { message: 'deploy checkout-api 3.1.0 to staging' } })) as ToolResult;
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/^Approval needed: .*checkout-api/);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent!.result[0].metadata.type).not.toBe('confirm_required');
    expect(await deployments('checkout-api', '3.1.0')).toBe(1);
    await client.close();
  });

  it('declining denies (nothing deployed); cancelling leaves it pending and returns the paused result', async () => {
    const declined = await sseClient(await login(server.url, 'admin'), () => ({ action: 'decline' }));
    const denied = (await declined.client.callTool({ name: 'chat', arguments: { message: 'deploy checkout-api 7.7.7 to staging' } })) as ToolResult;
    expect(denied.isError).toBeFalsy();
    expect(denied.structuredContent!.result[0].metadata.type).not.toBe('confirm_required'); // decided, the run went on
    expect(await deployments('checkout-api', '7.7.7')).toBe(0);
    await declined.client.close();

    const cancelled = await sseClient(await login(server.url, 'admin'), () => ({ action: 'cancel' }));
    const paused = (await cancelled.client.callTool({ name: 'chat', arguments: { message: 'deploy checkout-api 8.8.8 to staging' } })) as ToolResult;
    expect(cancelled.asked).toHaveLength(1);
    expect(paused.structuredContent!.result[0].metadata.type).toBe('confirm_required');
    expect(paused.content[0].text).toMatch(/action "confirm"/);
    expect(await deployments('checkout-api', '8.8.8')).toBe(0);
    await cancelled.client.close();
  });

  it('over stateless streamable HTTP nobody is asked: the paused result comes back', async () => {
    const client = new Client({ name: 'elicit-http', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      asked++;
      return { action: 'accept', content: { decision: 'confirm' } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${await login(server.url, 'admin')}` } } }));
    const paused = (await client.callTool({ name: 'chat', arguments: { message: 'deploy checkout-api 9.9.9 to staging' } })) as ToolResult;
    expect(asked).toBe(0);
    expect(paused.structuredContent!.result[0].metadata.type).toBe('confirm_required');
    await client.close();
  });
});
