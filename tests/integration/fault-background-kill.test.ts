/**
 * Faults: kill -9 of the process running a background run, right after its built-in deploy tool ran
 * (issue 30 item 5). The retry on a new process resumes the run's checkpoint with no new message:
 * the deploy is not asked for again (before, the retry re-sent the message as a new turn and the
 * model deployed a second time). The model sits behind a proxy that kills the gateway on the first
 * request carrying the tool's result (the tool ran; the answer has not begun).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOfflineModelServer, type OfflineModelServer } from '../../server/agent/offline-model/server.ts';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { createFaultTable } from '../helpers/fault-table.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { startModelProxy, type ModelProxy } from '../helpers/model-proxy.ts';
import { v1, waitForRun } from './v1-support.ts';

const table = createFaultTable('background-kill');
const VERSION = '9.3.1';

let db: TestDatabase;
let dataDir: string;
let model: OfflineModelServer;
let proxy: ModelProxy;
/** The process the proxy kills: set once it runs the run. */
let victim: MainProcess | undefined;
const started: MainProcess[] = [];

const env = () => ({
  DATABASE_URL: db.url,
  DATA_DIR: dataDir,
  SERVICE_CLIENT_SECRET: 'background-kill-secret-0123456789',
  OPENAI_BASE_URL: proxy.url,
  OPENAI_API_KEY: 'offline',
  // The deploy runs without a pause, as a background run's tool would under such a policy.
  POLICY_FILE: join(dataDir, 'policy.yaml'),
  LEASE_TTL_S: '2',
  JOBS_HEARTBEAT_S: '10',
  JOBS_SUPERVISE_S: '1',
  JOBS_POLL_S: '0.5',
  REPLICAS: 'true',
});

async function start(): Promise<MainProcess> {
  const p = await startMain([], env());
  started.push(p);
  return p;
}

/** Does this chat request carry a tool's result (the model is asked to answer after the tool ran)? */
function afterTool(body: Buffer): boolean {
  try {
    return (JSON.parse(body.toString()) as { messages?: Array<{ role: string }> }).messages?.some((m) => m.role === 'tool') ?? false;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'airlock-background-kill-'));
  await writeFile(join(dataDir, 'policy.yaml'), 'tool_rules:\n  deploy_service: allow\n');
  model = await startOfflineModelServer({ delayMs: 0, modelName: 'airlock-offline-1' });
  let killed = false;
  proxy = await startModelProxy(model.baseUrl, (_req, res, body) => {
    if (killed || !victim || !afterTool(body)) return false;
    killed = true;
    victim.child.kill('SIGKILL');
    res.destroy();
    return true;
  });
});

afterAll(async () => {
  table.print();
  for (const p of started) {
    p.child.kill('SIGKILL');
    await p.exited;
  }
  await proxy?.close();
  await model?.close();
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

async function deployments(): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM deployments WHERE version = $1', [VERSION]);
  return rows[0].n;
}

/** The run's turns (engine run ids, oldest first) and their ledger events. */
async function ledgerOf(runId: string): Promise<{ turns: string[]; events: Array<{ run_id: string; kind: string; payload: any }> }> {
  const turns = (await db.pool.query<{ id: string }>('SELECT engine_run_id::text AS id FROM agent_run_turns WHERE run_id = $1 ORDER BY linked_at', [runId])).rows.map((r) => r.id);
  const { rows } = await db.pool.query('SELECT run_id::text, kind, payload FROM conversation_events WHERE run_id = ANY($1::uuid[]) ORDER BY conversation_id, seq', [turns]);
  return { turns, events: rows };
}

describe('kill -9 of a background run after its tool', () => {
  it('the retry resumes the checkpoint: one deployment, one user message, the dead answer kept', async () => {
    victim = await start();
    const token = await login(victim.url, 'admin');
    const created = await v1(victim.url, '/runs', { token, body: { messages: [{ role: 'user', content: `deploy checkout-api ${VERSION} to staging` }] } });
    expect(created.status).toBe(202);
    const runId = created.body.run_id as string;
    // The proxy kills the process when the model is asked to answer after the deploy.
    await victim.exited;
    expect(await deployments()).toBe(1);

    const next = await start();
    const done = await waitForRun(next.url, token, runId, (r) => r.attempts >= 2 && ['completed', 'failed', 'cancelled'].includes(r.status), 60_000);
    expect(done.status, JSON.stringify(done.error ?? done)).toBe('completed');
    expect(done.attempts).toBe(2);
    expect(done.content).toContain(VERSION);
    expect(await deployments()).toBe(1);

    const { turns, events } = await ledgerOf(runId);
    expect(turns).toHaveLength(2);
    expect(events.filter((e) => e.kind === 'user.message')).toHaveLength(1);
    // The dead attempt's error answer stays, and the retry names the turn it took over from.
    expect(events.find((e) => e.run_id === turns[0] && e.kind === 'assistant.message')?.payload.error).toMatchObject({ code: 'INTERNAL' });
    const ends = events.filter((e) => e.kind === 'run.finished').map((e) => e.payload);
    expect(ends).toMatchObject([{ status: 'failed', stop_reason: 'process_exit' }, { status: 'done', retry_of: turns[0] }]);
    expect(events.filter((e) => e.kind === 'tool.call' && e.run_id === turns[1])).toEqual([]);

    expect(next.child.exitCode).toBeNull();
    table.record({ fault: 'kill -9 of a background run after its tool', outcome: `retried from its checkpoint, tool ran once, process up`, lost: Math.abs(1 - (await deployments())) });
  }, 120_000);
});
