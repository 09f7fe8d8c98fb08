/**
 * Fault (issue 24 item 4): kill -9 of the gateway while a turn runs and a message waits queued
 * behind it. The queue lives in PostgreSQL: after the restart, recovery settles the dead turn and
 * starts the queued message, exactly once, even with two replicas coming up at once (both sweep;
 * the claim is one transaction). Real processes (api, gateways) killed with SIGKILL; the running
 * turn is held at the model (model-gate.ts) so the kill lands while it runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { createFaultTable } from '../helpers/fault-table.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { startModelGate, type ModelGate } from '../helpers/model-gate.ts';

const table = createFaultTable('queue-kill');
const SECRET = 'queue-secret-0123456789abcdef';
let db: TestDatabase;
let dataDir: string;
let gate: ModelGate;
let api: MainProcess;
let token: string;
const started: MainProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'airlock-queue-'));
  gate = await startModelGate();
  api = await startMain(['--role', 'api'], { DATABASE_URL: db.url, DATA_DIR: dataDir, SERVICE_CLIENT_SECRET: SECRET });
  started.push(api);
  token = await login(api.url, 'admin');
});

afterAll(async () => {
  table.print();
  for (const p of started) {
    p.child.kill('SIGKILL');
    await p.exited;
  }
  await gate?.close();
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

async function startGateway(): Promise<MainProcess> {
  const gateway = await startMain(['--role', 'gateway'], { DATABASE_URL: db.url, DATA_DIR: dataDir, SERVICE_CLIENT_SECRET: SECRET, API_URL: api.url, LEASE_TTL_S: '2', REPLICAS: 'true', OPENAI_BASE_URL: gate.url, OPENAI_API_KEY: 'offline', OPENAI_MAX_RETRIES: '0' });
  started.push(gateway);
  return gateway;
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(sql, params);
  return rows[0].n;
}

describe('kill -9 of the gateway with a message queued behind the running turn', () => {
  it('after the restart the queued message runs exactly once', async () => {
    const gateway = await startGateway();
    const client = await connectChat(gateway.url, token);
    const opened = await collect(chat(client, 'hello'));
    const id = opened.final!.metadata.conversation_id;
    const held = gate.hold();
    void collect(chat(client, 'what can you do?', id)).catch(() => undefined); // dies with the process
    await held;

    const queued = await fetch(`${gateway.url}/api/agent/conversations/${id}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'user.message', payload: { text: 'list maintenance events', requestId: 'queued-before-kill' } }),
    });
    expect(queued.status).toBe(202);
    const { run_id: queuedRun } = (await queued.json()) as { run_id: string };

    gateway.child.kill('SIGKILL');
    await gateway.exited;
    client.close();
    gate.release();
    expect(await count('SELECT count(*)::int AS n FROM queued_inputs WHERE run_id = $1', [queuedRun])).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM runs WHERE conversation_id = $1 AND status = 'running'`, [id])).toBe(1);

    // Two replicas come up at once: both recover, both sweep the queue; one claims it.
    await Promise.all([startGateway(), startGateway()]);
    await expect
      .poll(async () => count(`SELECT count(*)::int AS n FROM runs WHERE id = $1 AND status = 'done'`, [queuedRun]), { timeout: 60_000, interval: 100 })
      .toBe(1);

    expect(await count('SELECT count(*)::int AS n FROM runs WHERE conversation_id = $1 AND request_id = $2', [id, 'queued-before-kill'])).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM conversation_events WHERE conversation_id = $1 AND kind = 'user.message' AND payload->>'request_id' = $2 AND payload->>'delivery' = 'queue'`, [id, 'queued-before-kill'])).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM conversation_events WHERE conversation_id = $1 AND kind = 'tool.result' AND run_id = $2`, [id, queuedRun])).toBeGreaterThan(0);
    expect(await count('SELECT count(*)::int AS n FROM queued_inputs WHERE conversation_id = $1', [id])).toBe(0);
    // The dead turn was settled by recovery, not left running.
    expect(await count(`SELECT count(*)::int AS n FROM runs WHERE conversation_id = $1 AND status = 'running'`, [id])).toBe(0);
    table.record({ fault: 'kill -9 gateway mid-turn, one message queued', outcome: 'queued message ran after restart (two replicas)', lost: 0 });
  }, 180_000); // three gateway starts on two shared CPUs
});
