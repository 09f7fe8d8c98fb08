/**
 * Runs whose process died: kill -9 of a real server mid-answer, then a new process finishes the
 * orphan failed / process_exit (and the conversation is usable again). A run that ends in an
 * approved approval with no tool result is left to the approval recovery.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDemoUsers } from '../../server/auth/index.ts';
import { createConversation } from '../../server/db/conversations.ts';
import { insertRun } from '../../server/db/runs.ts';
import { PgLedger, recoverOrphanedRuns } from '../../server/engine/index.ts';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startMain } from '../helpers/main-process.ts';

let db: TestDatabase;
let dataDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'airlock-recovery-'));
  await chmod(dataDir, 0o755);
});
afterAll(async () => {
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const env = () => ({ DATABASE_URL: db.url, DATA_DIR: dataDir, LEASE_TTL_S: '2', OFFLINE_MODEL_DELAY_MS: '100', SERVICE_CLIENT_SECRET: 'recovery-secret-0123456789' });

describe('orphaned runs', () => {
  it('1. kill -9 of the server mid-answer -> after a restart the run is finished failed / process_exit', async () => {
    const first = await startMain([], env());
    const token = await login(first.url, 'admin');
    const client = await connectChat(first.url, token);
    let conversationId = '';
    const submission = chat(client, 'tell me about yourself and what you can help me with today in detail');
    let tokens = 0;
    for await (const event of submission) {
      if (event.type !== 'data') continue;
      conversationId = ((event.data as any[])[0]).metadata.conversation_id;
      if (++tokens === 3) break;
    }
    first.child.kill('SIGKILL');
    await first.exited;
    client.close();
    const orphan = (await db.pool.query("SELECT id, status FROM runs WHERE conversation_id = $1", [conversationId])).rows;
    expect(orphan).toEqual([{ id: expect.any(String), status: 'running' }]);

    // 2. A new process (same database) notices the lapsed lease and settles the run.
    const second = await startMain([], env());
    try {
      const fresh = await login(second.url, 'admin');
      const read = async () => (await (await fetch(`${second.url}/api/agent/conversations/${conversationId}/events`, { headers: { authorization: `Bearer ${fresh}` } })).json()).events;
      await expect.poll(async () => (await read()).some((e: any) => e.kind === 'run.finished'), { timeout: 20_000, interval: 250 }).toBe(true);
      const events = await read();
      expect(events.at(-1)).toMatchObject({ kind: 'run.finished', payload: { run_id: orphan[0].id, status: 'failed', stop_reason: 'process_exit', error_code: 'INTERNAL' } });
      expect(events.filter((e: any) => e.kind === 'run.finished')).toHaveLength(1);
      expect((await db.pool.query('SELECT status FROM runs WHERE id = $1', [orphan[0].id])).rows[0].status).toBe('failed');
      const history = await (await fetch(`${second.url}/api/assistant/history?conversation_id=${conversationId}`, { headers: { authorization: `Bearer ${fresh}` } })).json();
      expect(history.items.at(-1).metadata).toMatchObject({ type: 'answer', error: { code: 'INTERNAL' } });

      // 3. The conversation is not stuck: the next message runs.
      const c2 = await connectChat(second.url, fresh);
      const next = await collect(chat(c2, 'hello', conversationId));
      c2.close();
      expect(next.status).toBe('complete');
      expect(next.types).not.toContain('error');
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });

  it('4. a run ending in an approved approval with no tool.result is left to the approval recovery', async () => {
    const ledger = new PgLedger(db.pool);
    await ensureDemoUsers(db.pool, { demoPassword: 'demo-password-1' });
    const userId = (await db.pool.query("SELECT id FROM users WHERE username = 'admin'")).rows[0].id;
    const conversationId = (await createConversation(db.pool, { userId, text: 'deploy' })).id;
    const runId = randomUUID(), approvalId = randomUUID();
    await insertRun(db.pool, { id: runId, conversationId, userId, requestId: randomUUID(), requestHash: 'h', owner: 'dead', leaseTtlS: 1 });
    await ledger.append(conversationId, [
      { kind: 'approval.resolved', payload: { run_id: runId, approval_id: approvalId, result: 'confirmed' } },
    ]);
    await db.pool.query("UPDATE runs SET lease_expires_at = now() - interval '1 minute' WHERE id = $1", [runId]);
    expect(await recoverOrphanedRuns(db.pool, ledger)).not.toContain(runId);
    expect((await db.pool.query('SELECT status FROM runs WHERE id = $1', [runId])).rows[0].status).toBe('running');

    // Once the approval recovery resumed it in a new run, the orphan is finished quietly (no error answer).
    const resumedRun = randomUUID();
    await ledger.append(conversationId, [{ kind: 'tool.result', payload: { run_id: resumedRun, tool_call_id: 't1', tool: 'deploy_service', status: 'done', output: {} } }]);
    expect(await recoverOrphanedRuns(db.pool, ledger)).toContain(runId);
    expect(await recoverOrphanedRuns(db.pool, ledger)).not.toContain(runId); // once
    const finished = (await ledger.readRun(conversationId, runId)).at(-1)!;
    expect(finished).toMatchObject({ kind: 'run.finished', payload: { status: 'failed', stop_reason: 'process_exit' } });
    expect((await db.pool.query("SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1 AND metadata ? 'error'", [conversationId])).rows[0].n).toBe(0);
    await ledger.close();
  });

  it('5. a decision turn that counted one approver of two (M-of-N) and died before its end: finished paused, no error answer', async () => {
    // The window between the decision's commit (approval.approved) and run.finished: a kill -9 there
    // must leave the approval waiting for its next approver, not a failed run.
    const ledger = new PgLedger(db.pool);
    await ensureDemoUsers(db.pool, { demoPassword: 'demo-password-1' });
    const userId = (await db.pool.query("SELECT id FROM users WHERE username = 'admin'")).rows[0].id;
    const conversationId = (await createConversation(db.pool, { userId, text: 'deploy to production' })).id;
    const runId = randomUUID(), approvalId = randomUUID();
    await insertRun(db.pool, { id: runId, conversationId, userId, requestId: randomUUID(), requestHash: 'h', owner: 'dead', leaseTtlS: 1 });
    await ledger.append(conversationId, [
      { kind: 'approval.approved', payload: { run_id: runId, approval_id: approvalId, by: 'admin2', approved_count: 1, approvals_required: 2 } },
    ]);
    await db.pool.query("UPDATE runs SET lease_expires_at = now() - interval '1 minute' WHERE id = $1", [runId]);
    expect(await recoverOrphanedRuns(db.pool, ledger)).toContain(runId);
    expect((await db.pool.query('SELECT status FROM runs WHERE id = $1', [runId])).rows[0].status).toBe('paused');
    const finished = (await ledger.readRun(conversationId, runId)).at(-1)!;
    expect(finished).toMatchObject({ kind: 'run.finished', payload: { status: 'paused', stop_reason: 'approval_required' } });
    expect((await db.pool.query("SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1 AND metadata ? 'error'", [conversationId])).rows[0].n).toBe(0);
    await ledger.close();
  });
});
