/**
 * Issue 24 item 2: a turn that completed is a completion, even when a tool was refused. A viewer's
 * refused deploy: Python `gradio_client` (its request sequence replayed: it cannot be installed
 * here) and @gradio/client 2.7.0 get the agent's explanation instead of a FORBIDDEN error.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, connectChat, login, type WireMessage } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { chatFnIndex, pyData, pythonPredict } from '../helpers/python-predict.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const run = promisify(execFile);
const sh = async (line: string) => (await run('bash', ['-O', 'lastpipe', '-c', line], { timeout: 30_000 })).stdout;

let db: TestDatabase;
let server: TestServer;
let base: string;
let adminToken: string;
let chatIndex: number;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db });
  base = `${server.url}/api/agent/gradio`;
  adminToken = await login(server.url, 'admin');
  chatIndex = await chatFnIndex(base, adminToken);
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe('a refused tool completes the turn', () => {
  it("Python: a viewer's refused deploy returns the agent's explanation, not a FORBIDDEN error", async () => {
    const viewerToken = await login(server.url, 'viewer');
    const turn = await pythonPredict({ base, chatIndex }, viewerToken, 'py-viewer-1', pyData('deploy checkout-api 3.0.0 to production'));
    expect(turn.success).toBe(true);
    expect(turn.frame.title).toBeUndefined();
    expect(turn.message.content.length).toBeGreaterThan(0);
    expect(turn.message.metadata.type).not.toBe('error');
  });

  it("@gradio/client: predict() resolves with the explanation; the stream still said FORBIDDEN (the step's error, with its tool_call_id)", async () => {
    const viewer = await connectChat(server.url, await login(server.url, 'viewer'));
    const turn = await collect(viewer.submit('/chat', { message: { text: 'deploy checkout-api 3.0.1 to production', files: [] } }));
    expect(turn.status).toBe('complete');
    const refusal = turn.messages.find((m) => m.metadata.type === 'error');
    expect(refusal?.metadata).toMatchObject({ code: 'FORBIDDEN', tool_call_id: expect.any(String) });
    expect(turn.final!.content.length).toBeGreaterThan(0);
    const result = await viewer.predict('/chat', { message: { text: 'deploy checkout-api 3.0.2 to production', files: [] } });
    expect(((result.data as WireMessage[])[0]).content.length).toBeGreaterThan(0);
    viewer.close();
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'checkout-api' AND version LIKE '3.0.%'`);
    expect(rows[0].n).toBe(0);
  });

  it("curl per Gradio's guide: the call ends with `event: complete` carrying the explanation, not `event: error`", async () => {
    const auth = `-H "Authorization: Bearer ${await login(server.url, 'viewer')}"`;
    const body = JSON.stringify({ data: [{ text: 'deploy checkout-api 3.0.3 to production', files: [] }] });
    const out = await sh(`curl -s -X POST ${base}/gradio_api/call/chat -H "Content-Type: application/json" ${auth} -d '${body}' | awk -F'"' '{ print $4}' | read EVENT_ID; curl -s -N ${auth} ${base}/gradio_api/call/chat/$EVENT_ID`);
    const lines = out.split('\n');
    expect(lines).not.toContain('event: error');
    const at = lines.lastIndexOf('event: complete');
    expect(at).toBeGreaterThanOrEqual(0);
    const [message] = JSON.parse(lines[at + 1].slice('data: '.length)) as WireMessage[];
    expect(message.content.length).toBeGreaterThan(0);
  });
});
