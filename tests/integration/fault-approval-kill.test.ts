/**
 * Faults: kill -9 of the gateway at each step of an approval (crash-safety issue, item 2: confirmed
 * means done, nothing runs twice). The gateway is a real process killed with SIGKILL at the moment
 * that matters; the api runs as its own process, so it can be frozen (SIGSTOP) to hold the resumed
 * tool back until the kill has landed.
 */
import type { Client } from '@gradio/client';
import { ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { danglingToolCalls } from '../../server/agent/runtime.ts';
import { createCheckpointer } from '../../server/agent/checkpointer.ts';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { createFaultTable } from '../helpers/fault-table.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { startKillingProxy } from '../helpers/killing-proxy.ts';

const table = createFaultTable('approval-kill');

const SECRET = 'crash-secret-0123456789abcdef';
let db: TestDatabase;
let dataDir: string;
let api: MainProcess;
let token: string;
const started: MainProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'airlock-crash-'));
  api = await startMain(['--role', 'api'], { DATABASE_URL: db.url, DATA_DIR: dataDir, SERVICE_CLIENT_SECRET: SECRET, DEMO_USERS: 'true' });
  started.push(api);
  token = await login(api.url, 'admin');
});

afterAll(async () => {
  table.print();
  for (const p of started) {
    p.child.kill('SIGCONT');
    p.child.kill('SIGKILL');
    await p.exited;
  }
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

async function startGateway(apiUrl = api.url): Promise<{ gateway: MainProcess; client: Client }> {
  const gateway = await startMain(['--role', 'gateway'], { DATABASE_URL: db.url, DATA_DIR: dataDir, SERVICE_CLIENT_SECRET: SECRET, API_URL: apiUrl, LEASE_TTL_S: '2' });
  started.push(gateway);
  return { gateway, client: await connectChat(gateway.url, token) };
}

async function pauseDeploy(client: Client, version: string): Promise<{ conversationId: string; approvalId: string }> {
  const pause = await collect(chat(client, `deploy checkout-api ${version} to staging`));
  expect(pause.final!.metadata.type).toBe('confirm_required');
  return { conversationId: pause.final!.metadata.conversation_id, approvalId: pause.final!.metadata.approval_id as string };
}

/** Confirms, and SIGKILLs the gateway as soon as the stream shows a message of type `killAt`. */
async function confirmAndKill(client: Client, gateway: MainProcess, ids: { conversationId: string; approvalId: string }, killAt: string) {
  const submission = client.submit('/chat', { message: 'confirm', conversation_id: ids.conversationId, action: 'confirm', approval_id: ids.approvalId });
  await collect(submission, (m) => {
    if (m.metadata.type === killAt) gateway.child.kill('SIGKILL');
  }).catch(() => undefined); // the connection dies with the process
  await gateway.exited;
  client.close();
}

async function deployments(version: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM deployments WHERE version = $1`, [version]);
  return rows[0].n;
}

async function approval(id: string): Promise<{ status: string; resumed: boolean }> {
  const { rows } = await db.pool.query<{ status: string; resumed: boolean }>('SELECT status, resumed_at IS NOT NULL AS resumed FROM approvals WHERE id = $1', [id]);
  return rows[0];
}

/**
 * Waits for the restarted gateway's recovery to consume the decision and finish the resumed run
 * (until then a new submit is rightly CONVERSATION_BUSY). Bounded; recovery runs right after listen.
 */
async function untilResumed(id: string, deadlineMs = 30_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  const settled = async () => {
    const { rows } = await db.pool.query<{ done: boolean }>(
      `SELECT a.resumed_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.conversation_id = a.conversation_id AND r.status = 'running') AS done
       FROM approvals a WHERE a.id = $1`,
      [id],
    );
    return rows[0]?.done === true;
  };
  while (!(await settled())) {
    if (Date.now() > until) throw new Error(`approval ${id} was not resumed (its run finished) within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('kill -9 of the gateway around a confirm', () => {
  it('after confirm_resolved and before the tool ran: the next start runs the confirmed action, once', async () => {
    const { gateway, client } = await startGateway();
    const ids = await pauseDeploy(client, '7.7.1');
    api.child.kill('SIGSTOP'); // the resumed tool's first call to the api now waits
    await confirmAndKill(client, gateway, ids, 'confirm_resolved');
    api.child.kill('SIGCONT');
    expect(await approval(ids.approvalId)).toEqual({ status: 'approved', resumed: false });
    // The dead gateway's tool call may already sit in the stopped api's socket (written before the
    // kill); the api then serves it on SIGCONT. Either way the action must end up run exactly once.
    expect(await deployments('7.7.1')).toBeLessThanOrEqual(1);

    const restarted = await startGateway();
    await untilResumed(ids.approvalId);
    expect(await deployments('7.7.1')).toBe(1);
    // Nothing is owed any more: a second confirm finds nothing to decide.
    const again = await collect(restarted.client.submit('/chat', { message: 'confirm', conversation_id: ids.conversationId, action: 'confirm' }));
    expect(again.final!.metadata).toMatchObject({ type: 'error', code: 'APPROVAL_NOT_FOUND' });
    table.record({ fault: 'kill -9 gateway after confirm_resolved, before the tool', outcome: 'resumed at next start, ran once', lost: Math.abs(1 - (await deployments('7.7.1'))) });
    restarted.client.close();
    restarted.gateway.child.kill('SIGKILL');
    await restarted.gateway.exited;
  });

  it('after the tool ran and before the answer: the next start does not run it again', async () => {
    const { gateway, client } = await startGateway();
    const ids = await pauseDeploy(client, '7.7.2');
    await confirmAndKill(client, gateway, ids, 'tool_end');
    expect(await deployments('7.7.2')).toBe(1);

    const restarted = await startGateway();
    await untilResumed(ids.approvalId);
    expect(await deployments('7.7.2')).toBe(1);
    table.record({ fault: 'kill -9 gateway mid-answer (after the tool)', outcome: 'not run again at next start', lost: Math.abs(1 - (await deployments('7.7.2'))) });
    restarted.client.close();
    restarted.gateway.child.kill('SIGKILL');
    await restarted.gateway.exited;
  });

  it('before confirm: the approval survives the restart and a confirm runs the action once', async () => {
    const { gateway, client } = await startGateway();
    const ids = await pauseDeploy(client, '7.7.3');
    gateway.child.kill('SIGKILL');
    await gateway.exited;
    client.close();

    const restarted = await startGateway();
    const turn = await collect(restarted.client.submit('/chat', { message: 'confirm', conversation_id: ids.conversationId, action: 'confirm', approval_id: ids.approvalId }));
    expect(turn.messages[0].metadata).toMatchObject({ type: 'confirm_resolved', result: 'confirmed' });
    expect(turn.types).toContain('tool_end');
    expect(await deployments('7.7.3')).toBe(1);
    table.record({ fault: 'kill -9 gateway before confirm', outcome: 'approval answerable after restart, ran once', lost: Math.abs(1 - (await deployments('7.7.3'))) });
    restarted.client.close();
    restarted.gateway.child.kill('SIGKILL');
    await restarted.gateway.exited;
  });

  it('mid-tool (the request reached the api, the gateway died before the answer): the next start repeats it with the same idempotency key, one effect', async () => {
    // The gateway reaches the api through a proxy that kills the gateway once the deploy request is through.
    let gateway: MainProcess | undefined;
    const proxy = await startKillingProxy(api.url, (req) => req.method === 'POST' && req.url === '/api/tools/deployments', () => gateway?.child.kill('SIGKILL'));
    const started = await startGateway(proxy.url);
    gateway = started.gateway;
    const ids = await pauseDeploy(started.client, '7.7.4');
    await collect(started.client.submit('/chat', { message: 'confirm', conversation_id: ids.conversationId, action: 'confirm', approval_id: ids.approvalId })).catch(() => undefined);
    await gateway.exited;
    started.client.close();
    await proxy.forwarded; // the api has answered the dead gateway's request: the effect happened
    expect(await deployments('7.7.4')).toBe(1);

    const restarted = await startGateway();
    await untilResumed(ids.approvalId);
    expect(await deployments('7.7.4')).toBe(1);
    table.record({ fault: 'kill -9 gateway mid-tool', outcome: 'repeated with the same key at next start, one effect', lost: Math.abs(1 - (await deployments('7.7.4'))) });
    await proxy.close();
    restarted.client.close();
    restarted.gateway.child.kill('SIGKILL');
    await restarted.gateway.exited;
  });
});

describe('kill -9 of the gateway while a tool with an effect is at the api (checkpoints are written behind)', () => {
  it('the model step that asked for the call was stored before the call left: the next turn finds the call, answered as cancelled', async () => {
    let gateway: MainProcess | undefined;
    const proxy = await startKillingProxy(api.url, (req) => req.method === 'POST' && req.url === '/api/tools/tasks', () => gateway?.child.kill('SIGKILL'));
    const started = await startGateway(proxy.url);
    gateway = started.gateway;
    // Checkpoint writes wait on a lock until the card shows: a call that did not wait for its step
    // to be stored would reach the api (and the kill) with the step still unwritten.
    const lock = await db.pool.connect();
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE checkpoints IN SHARE MODE');
    const released = { done: false };
    await collect(chat(started.client, 'create a task to rotate the kill-behind credentials'), (m) => {
      if (m.metadata.type === 'tool_start' && !released.done) {
        released.done = true;
        void lock.query('COMMIT');
      }
    }).catch(() => undefined);
    if (!released.done) await lock.query('COMMIT');
    lock.release();
    await gateway.exited;
    started.client.close();
    await proxy.forwarded;
    const { rows: [conversation] } = await db.pool.query<{ id: string }>(`SELECT conversation_id AS id FROM messages WHERE content LIKE '%kill-behind%' LIMIT 1`);

    // Read as the next run reads it: the thread's last stored checkpoint ends with the call.
    const saver = await createCheckpointer(db.pool, db.url);
    let dangling: Array<{ id: string; name: string }> = [];
    try {
      const stored = await saver.getTuple({ configurable: { thread_id: conversation.id } });
      dangling = danglingToolCalls((stored?.checkpoint.channel_values as { messages?: BaseMessage[] }).messages ?? []);
      expect(dangling).toEqual([{ id: expect.any(String), name: 'create_task' }]);
    } finally {
      await saver.end();
    }

    // The next turn on a restarted gateway closes it as cancelled and answers.
    const restarted = await startGateway();
    const next = await collect(chat(restarted.client, 'what tasks are there?', conversation.id));
    expect(next.final!.metadata.type).not.toBe('error');
    const saverAfter = await createCheckpointer(db.pool, db.url);
    try {
      const after = await saverAfter.getTuple({ configurable: { thread_id: conversation.id } });
      const replies = ((after?.checkpoint.channel_values as { messages?: BaseMessage[] }).messages ?? []).filter((m) => ToolMessage.isInstance(m) && m.name === 'create_task');
      expect(String(replies[0]?.content)).toContain('CANCELLED');
    } finally {
      await saverAfter.end();
    }
    table.record({ fault: 'kill -9 gateway while a tool with an effect is at the api', outcome: 'the call is in the stored thread; closed as cancelled next turn', lost: dangling.length === 1 ? 0 : 1 });
    await proxy.close();
    restarted.client.close();
    restarted.gateway.child.kill('SIGKILL');
    await restarted.gateway.exited;
  });
});
