/**
 * /chat across its edges: the four call shapes, cancel, the multi-tab gate, approval expiry, a
 * gateway restart between pause and confirm, a model endpoint that is down, and the audit trail.
 */
import { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login, type WireMessage } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let db: TestDatabase;
let server: TestServer;
let token: string;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '15' } });
  token = await login(server.url, 'admin');
  client = await connectChat(server.url, token);
});

afterAll(async () => {
  client?.close();
  await server?.close();
  await db?.drop();
});

const lastOf = (messages: WireMessage[], type: string) => messages.filter((m) => m.metadata.type === type).at(-1);

describe('/chat call shapes (real @gradio/client)', () => {
  it('positional: [{text, files}, conversation_id, action]', async () => {
    const turn = await collect(client.submit('/chat', [{ text: 'hello', files: [] }, null, null]));
    expect(turn.status).toBe('complete');
    expect(turn.final!.content.length).toBeGreaterThan(0);
  });

  it('keyword: {message, conversation_id}', async () => {
    const first = await collect(client.submit('/chat', { message: { text: 'hello', files: [] } }));
    const id = first.final!.metadata.conversation_id;
    const turn = await collect(client.submit('/chat', { message: { text: 'list maintenance events', files: [] }, conversation_id: id }));
    expect(turn.final!.metadata.conversation_id).toBe(id);
    expect(turn.types).toContain('tool_end');
  });

  it("the ADR's submit(endpoint, {text, files}, [conversation_id, null])", async () => {
    const first = await collect(client.submit('/chat', { text: 'hello', files: [] }));
    const id = first.final!.metadata.conversation_id;
    const turn = await collect(client.submit('/chat', { text: 'search dashboards for latency', files: [] }, [id, null]));
    expect(turn.final!.metadata.conversation_id).toBe(id);
    expect(turn.types).toContain('tool_end');
  });

  it("the ADR's confirm: {message: 'confirm', action, conversation_id} + [id, 'confirm']", async () => {
    const pause = await collect(chat(client, 'deploy inventory-service 1.2.3 to dev'));
    const id = pause.final!.metadata.conversation_id;
    expect(pause.final!.metadata.type).toBe('confirm_required');
    const turn = await collect(client.submit('/chat', { message: 'confirm', action: 'confirm', conversation_id: id }, [id, 'confirm']));
    expect(turn.messages[0].metadata).toMatchObject({ type: 'confirm_resolved', result: 'confirmed' });
    expect(turn.types).toContain('tool_end');
  });
});

describe('/chat lifecycle', () => {
  it('cancel mid-answer keeps the partial answer (marked cancelled) and the conversation usable', async () => {
    const submission = chat(client, 'tell me about yourself and what you can help me with today in detail');
    let conversationId = '';
    const turn = await collect(submission, async (m, i) => {
      conversationId = m.metadata.conversation_id;
      if (i === 3) await submission.cancel();
    });
    expect(turn.messages.length).toBeLessThan(40);
    await new Promise((r) => setTimeout(r, 300));
    const history = await (await fetch(`${server.url}/api/assistant/history?conversation_id=${conversationId}`, { headers: { authorization: `Bearer ${token}` } })).json();
    const answer = history.items.find((m: { metadata: { type?: string } }) => m.metadata.type === 'answer');
    expect(answer.metadata.cancelled).toBe(true);
    expect(answer.content.length).toBeGreaterThan(0);
    const next = await collect(chat(client, "what's the health of payments-api", conversationId));
    expect(next.status).toBe('complete');
    expect(next.types).toContain('tool_end');
  });

  it('a second client on a streaming conversation queues behind it (issue 24), then gets its own answer', async () => {
    const first = await collect(chat(client, 'hello'));
    const id = first.final!.metadata.conversation_id;
    const other = await connectChat(server.url, token);
    let queued: ReturnType<typeof collect> | undefined;
    let firstOfOther: WireMessage | undefined;
    const turn = await collect(chat(client, 'tell me about yourself and what you can help me with today in detail', id), async (_m, i) => {
      if (i === 2) {
        let seen!: () => void;
        const arrived = new Promise<void>((r) => (seen = r));
        queued = collect(chat(other, 'hello', id), (m, j) => {
          if (j === 0) (firstOfOther = m), seen();
        });
        await arrived;
      }
    });
    expect(turn.status).toBe('complete');
    expect(firstOfOther?.metadata).toMatchObject({ type: 'queued', position: 1 });
    const after = await queued!;
    other.close();
    expect(after.status).toBe('complete');
    expect(after.final!.content.length).toBeGreaterThan(0);
  });

  it('concurrent confirms resolve the approval once: one deployment', async () => {
    const pause = await collect(chat(client, 'deploy orders-api 4.5.6 to staging'));
    const id = pause.final!.metadata.conversation_id;
    const other = await connectChat(server.url, token);
    const [a, b] = await Promise.all([collect(chat(client, 'confirm', id, 'confirm')), collect(chat(other, 'confirm', id, 'confirm'))]);
    other.close();
    const resolved = [a, b].filter((t) => t.types.includes('confirm_resolved'));
    expect(resolved).toHaveLength(1);
    const loser = [a, b].find((t) => !t.types.includes('confirm_resolved'))!;
    expect(['APPROVAL_NOT_FOUND', 'CONVERSATION_BUSY']).toContain(loser.final!.metadata.code);
    const count = await db.pool.query("SELECT count(*) FROM deployments WHERE service = 'orders-api' AND version = '4.5.6'");
    expect(Number(count.rows[0].count)).toBe(1);
  });

  it('audits tool calls with both identities, the tool_call_id and the conversation', async () => {
    const turn = await collect(chat(client, "what's the health of checkout-api"));
    const start = turn.messages.find((m) => m.metadata.type === 'tool_start')!;
    const { rows } = await db.pool.query('SELECT * FROM audit_log WHERE tool_call_id = $1', [start.metadata.tool_call_id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ service_actor: server.config.service.clientId, conversation_id: start.metadata.conversation_id, status_code: 200 });
    expect(rows[0]).toMatchObject({ username: 'admin', user_role: 'admin', outcome: 'success' });
    expect(rows[0].user_id).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('/chat with a short approval timeout and a restart', () => {
  it('an expired approval resolves as expired and the tool never runs', async () => {
    const short = await startTestServer({ db, env: { APPROVAL_TIMEOUT_S: '1' } });
    try {
      const c = await connectChat(short.url, await login(short.url, 'operator'));
      const pause = await collect(chat(c, 'end the maintenance on cdn-edge'));
      expect(pause.final!.metadata).toMatchObject({ type: 'confirm_required', timeout_s: 1 });
      // The expiry timer expires it on time, with nobody looking, and finishes the run...
      const id = pause.final!.metadata.conversation_id as string;
      const settled = async () => {
        const { rows } = await db.pool.query(
          `SELECT (SELECT status FROM approvals WHERE conversation_id = $1 ORDER BY created_at DESC LIMIT 1) AS approval,
                  (SELECT count(*)::int FROM runs WHERE conversation_id = $1 AND status = 'running') AS running`,
          [id],
        );
        return rows[0].approval === 'expired' && rows[0].running === 0;
      };
      for (let waited = 0; !(await settled()); waited += 100) {
        if (waited > 15_000) throw new Error('the approval was not expired by the timer within 15 s');
        await new Promise((r) => setTimeout(r, 100));
      }
      // ...so a late confirm is told it expired (not "no approval"), and nothing runs.
      const turn = await collect(chat(c, 'confirm', id, 'confirm'));
      expect(turn.messages[0].metadata).toMatchObject({ type: 'error', code: 'APPROVAL_EXPIRED' });
      expect(turn.types).not.toContain('tool_end');
      const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM audit_log WHERE conversation_id = $1 AND operation = 'end_maintenance' AND outcome = 'success'", [id]);
      expect(rows[0].n).toBe(0);
      c.close();
    } finally {
      await short.close();
    }
  });

  it('a gateway restart between confirm_required and confirm still resumes from the checkpoint', async () => {
    const first = await startTestServer({ db });
    const adminToken = await login(first.url, 'admin');
    const c1 = await connectChat(first.url, adminToken);
    const pause = await collect(chat(c1, 'deploy auth-service 7.7.7 to staging'));
    const id = pause.final!.metadata.conversation_id;
    expect(pause.final!.metadata.type).toBe('confirm_required');
    c1.close();
    await first.close();

    const second = await startTestServer({ db });
    try {
      const c2 = await connectChat(second.url, adminToken);
      const turn = await collect(chat(c2, 'confirm', id, 'confirm'));
      expect(turn.messages[0].metadata).toMatchObject({ type: 'confirm_resolved', result: 'confirmed' });
      expect(lastOf(turn.messages, 'tool_end')?.metadata).toMatchObject({ tool: 'deploy_service' });
      c2.close();
    } finally {
      await second.close();
    }
  });

  it('a model endpoint that is down ends with LLM_UNAVAILABLE and the gateway stays up', async () => {
    const down = await startTestServer({ db, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_MAX_RETRIES: '0', OPENAI_MODEL: 'gpt-4o-mini' } });
    try {
      const c = await connectChat(down.url, await login(down.url, 'admin'));
      const turn = await collect(chat(c, 'hello'));
      expect(turn.final!.metadata).toMatchObject({ type: 'error', code: 'LLM_UNAVAILABLE', retryable: true });
      const again = await collect(chat(c, 'hello again'));
      expect(again.final!.metadata).toMatchObject({ type: 'error', code: 'LLM_UNAVAILABLE' });
      c.close();
    } finally {
      await down.close();
    }
  });
});
