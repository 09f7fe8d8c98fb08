/**
 * Issue 24 item 2, Gradio ChatInterface habits with the real clients against the real app and
 * PostgreSQL: one Gradio session (`session_hash`) calling /chat without `conversation_id`
 *   continues one conversation, as gr.ChatInterface keeps history in per-session State: Python `gradio_client`
 *   (its request sequence replayed: it cannot be installed here), @gradio/client 2.7.0 and curl
 *   following Gradio's guide (`POST /call/chat` with a `session_hash`). `conversation_id` still
 *   wins, `"new"` starts a new one, and the key is (user, session_hash).
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
let operatorToken: string;
let chatIndex: number;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db });
  base = `${server.url}/api/agent/gradio`;
  adminToken = await login(server.url, 'admin');
  operatorToken = await login(server.url, 'operator');
  chatIndex = await chatFnIndex(base, adminToken);
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

const conversationOf = (message: WireMessage | undefined) => message?.metadata.conversation_id;

describe('one Gradio session, one conversation (gr.ChatInterface habit)', () => {
  it('Python: two predict() calls on one Client continue one conversation; another Client starts its own', async () => {
    const first = await pythonPredict({ base, chatIndex }, adminToken, 'py-session-1', pyData('hello'));
    const second = await pythonPredict({ base, chatIndex }, adminToken, 'py-session-1', pyData('what did I just say?'));
    expect(first.success).toBe(true);
    expect(second.success).toBe(true);
    expect(conversationOf(second.message)).toBe(conversationOf(first.message));
    const other = await pythonPredict({ base, chatIndex }, adminToken, 'py-session-2', pyData('hello'));
    expect(conversationOf(other.message)).not.toBe(conversationOf(first.message));
    // The conversation holds both turns, in order.
    const { rows } = await db.pool.query(`SELECT role, content FROM messages WHERE conversation_id = $1 AND role = 'user' ORDER BY seq`, [conversationOf(first.message)]);
    expect(rows.map((r) => r.content)).toEqual(['hello', 'what did I just say?']);
  });

  it('Python: conversation_id still wins, and the session then continues that one; "new" starts a new one', async () => {
    const a = await pythonPredict({ base, chatIndex }, adminToken, 'py-session-3', pyData('hello'));
    const b = await pythonPredict({ base, chatIndex }, adminToken, 'py-session-4', pyData('hello'));
    const named = await pythonPredict({ base, chatIndex }, adminToken, 'py-session-3', pyData('and now?', conversationOf(b.message)!));
    expect(conversationOf(named.message)).toBe(conversationOf(b.message));
    const next = await pythonPredict({ base, chatIndex }, adminToken, 'py-session-3', pyData('still there?'));
    expect(conversationOf(next.message)).toBe(conversationOf(b.message));
    const fresh = await pythonPredict({ base, chatIndex }, adminToken, 'py-session-3', pyData('hello', 'new'));
    expect([conversationOf(a.message), conversationOf(b.message)]).not.toContain(conversationOf(fresh.message));
    const after = await pythonPredict({ base, chatIndex }, adminToken, 'py-session-3', pyData('again'));
    expect(conversationOf(after.message)).toBe(conversationOf(fresh.message));
  });

  it("the key is (user, session_hash): another user's call with the same session_hash never continues this user's conversation", async () => {
    const mine = await pythonPredict({ base, chatIndex }, adminToken, 'py-shared-hash', pyData('hello'));
    const theirs = await pythonPredict({ base, chatIndex }, operatorToken, 'py-shared-hash', pyData('hello'));
    expect(theirs.success).toBe(true);
    expect(conversationOf(theirs.message)).not.toBe(conversationOf(mine.message));
    const mineAgain = await pythonPredict({ base, chatIndex }, adminToken, 'py-shared-hash', pyData('hello again'));
    expect(conversationOf(mineAgain.message)).toBe(conversationOf(mine.message));
  });

  it('@gradio/client: two predict() calls on one Client continue one conversation; a new Client and "new" start new ones', async () => {
    const client = await connectChat(server.url, adminToken);
    const first = (await client.predict('/chat', { message: { text: 'hello', files: [] } })).data as WireMessage[];
    const second = (await client.predict('/chat', { message: { text: 'hello again', files: [] } })).data as WireMessage[];
    expect(conversationOf(second[0])).toBe(conversationOf(first[0]));
    // What our UI sends for a new conversation (src/lib/chat/transport.ts): "new".
    const fresh = await collect(client.submit('/chat', { message: { text: 'hello', files: [] }, conversation_id: 'new', action: null, approval_id: null }));
    expect(fresh.status).toBe('complete');
    expect(conversationOf(fresh.final)).not.toBe(conversationOf(first[0]));
    client.close();
    const another = await connectChat(server.url, adminToken);
    const third = (await another.predict('/chat', { message: { text: 'hello', files: [] } })).data as WireMessage[];
    expect([conversationOf(first[0]), conversationOf(fresh.final)]).not.toContain(conversationOf(third[0]));
    another.close();
  });

  it("curl per Gradio's guide: two calls sharing a session_hash continue one conversation; calls without one start their own", async () => {
    const auth = `-H "Authorization: Bearer ${adminToken}"`;
    const call = (body: string) =>
      sh(`curl -s -X POST ${base}/gradio_api/call/chat -s -H "Content-Type: application/json" ${auth} -d '${body}' | awk -F'"' '{ print $4}' | read EVENT_ID; curl -s -N ${auth} ${base}/gradio_api/call/chat/$EVENT_ID`);
    const last = (out: string) => {
      const lines = out.split('\n');
      const at = lines.lastIndexOf('event: complete');
      expect(at).toBeGreaterThanOrEqual(0);
      return JSON.parse(lines[at + 1].slice('data: '.length))[0] as WireMessage;
    };
    const body = (text: string, session?: string) => JSON.stringify({ data: [{ text, files: [] }], ...(session ? { session_hash: session } : {}) });
    const first = last(await call(body('hello', 'curl-session-1')));
    const second = last(await call(body('hello again', 'curl-session-1')));
    expect(conversationOf(second)).toBe(conversationOf(first));
    const a = last(await call(body('hello')));
    const b = last(await call(body('hello')));
    expect(conversationOf(a)).not.toBe(conversationOf(b));
    expect([conversationOf(a), conversationOf(b)]).not.toContain(conversationOf(first));
  });
});
