/**
 * Approval webhook delivery across processes (issue 26 item 3 and 4, the paths approval-webhooks
 * does not take): two real gateway processes on one database, both with APPROVAL_WEBHOOKS and
 * PUBLIC_URL, and a real local receiver that refuses the first POST of every event (HTTP 500).
 * - A retry carries the same one-use links as the first try: links are minted once per (approval,
 *   approver, receiver), so one stored link per approver, however many tries.
 * - Each event is accepted exactly once although two gateways run the delivery loop.
 * - The receiver down: retried on the real schedule, shortened only by its setting
 *   (APPROVAL_WEBHOOK_RETRY_MS), and delivered once when it is back.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TWO_ADMIN_POLICY } from '../helpers/approval-policy.ts';
import { hashPassword } from '../../server/auth/index.ts';
import { verifyWebhook } from '../../server/v1/webhooks/sign.ts';
import { login } from '../helpers/chat-client.ts';
import { freePort } from '../helpers/nginx.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { eventually, v1, waitForRun } from './v1-support.ts';

const SECRET = 'delivery-secret-0123456789abcdef';
const HOOK_SECRET = 'receiver-secret-0123456789';

/** A real receiver that answers 500 to the first POST of each event id, 200 to the next ones. */
class FailOnceReceiver {
  posts: Array<{ id: string; type: string; approvalId: string; links: Array<{ user: string; url: string }>; status: number }> = [];
  port = 0;
  #server: Server | null = null;
  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const signed = verifyWebhook(HOOK_SECRET, String(req.headers['airlock-signature'] ?? ''), raw, Math.floor(Date.now() / 1000));
        const body = JSON.parse(raw);
        const status = !signed ? 401 : this.posts.some((p) => p.id === body.id) ? 200 : 500;
        this.posts.push({ id: body.id, type: body.type, approvalId: body.approval.id, links: body.links, status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
  }
  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()));
    this.#server?.closeAllConnections();
  }
  of(approvalId: string) {
    return this.posts.filter((p) => p.approvalId === approvalId);
  }
}

let db: TestDatabase;
let dir: string;
const processes: MainProcess[] = [];
let gateways: MainProcess[] = [];
const receiver = new FailOnceReceiver();
const tokens: Record<string, string> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'airlock-webhook-delivery-'));
  await writeFile(join(dir, 'policy.yaml'), TWO_ADMIN_POLICY);
  await receiver.start();
  const api = await startMain(['--role', 'api'], { DATABASE_URL: db.url, DATA_DIR: dir, SERVICE_CLIENT_SECRET: SECRET });
  processes.push(api);
  const hash = await hashPassword('demo-password-1');
  for (const u of ['admin2', 'admin3']) await db.pool.query(`INSERT INTO users (username, password_hash, role, tenant) VALUES ($1, $2, 'admin', 'demo')`, [u, hash]);
  for (const u of ['admin', 'admin2', 'admin3']) tokens[u] = await login(api.url, u);
  const env = {
    DATABASE_URL: db.url, DATA_DIR: dir, SERVICE_CLIENT_SECRET: SECRET, API_URL: api.url, POLICY_FILE: join(dir, 'policy.yaml'), OFFLINE_MODEL_DELAY_MS: '1',
    APPROVAL_WEBHOOKS: JSON.stringify([{ url: `http://127.0.0.1:${receiver.port}/hook`, secret: HOOK_SECRET }]),
    // The real schedule (doubling, capped at 300 times the first delay), started at 100 ms instead of 1 s.
    APPROVAL_WEBHOOK_RETRY_MS: '100',
    // Two gateways on one database on purpose: without it the second refuses to start, or both start
    // when their checks race (it failed CI once under load).
    REPLICAS: 'true',
  };
  // Links need PUBLIC_URL; each gateway's is its own address (the ready line names it).
  const gateway = async () => {
    const port = await freePort();
    const g = await startMain(['--role', 'gateway'], { ...env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` });
    processes.push(g);
    return g;
  };
  gateways = await Promise.all([gateway(), gateway()]);
}, 120_000);

afterAll(async () => {
  for (const p of processes) {
    p.child.kill('SIGKILL');
    await p.exited;
  }
  await receiver.stop();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function pausedDeploy(gateway: MainProcess, version: string, environment = 'production'): Promise<{ runId: string; approvalId: string }> {
  const run = await v1(gateway.url, '/runs', { token: tokens.admin, body: { messages: [{ role: 'user', content: `deploy payments-api ${version} to ${environment}` }] } });
  expect(run.status, JSON.stringify(run.body)).toBe(202);
  const paused = await waitForRun(gateway.url, tokens.admin, run.body.run_id, (r) => r.status === 'awaiting_approval');
  return { runId: run.body.run_id, approvalId: paused.approval_request_ids[0] };
}

const deliveries = async (approvalId: string) =>
  (await db.pool.query<{ status: string; attempts: number }>(`SELECT d.status, d.attempts FROM approval_webhook_deliveries d JOIN approval_outbox o ON o.id = d.event_id WHERE o.approval_id = $1`, [approvalId])).rows;

describe('webhook delivery across two gateways', () => {
  it('a retry carries the same links as the first try: one stored link per approver', async () => {
    const { approvalId } = await pausedDeploy(gateways[0], '7.7.1');
    const posts = await eventually(async () => { const p = receiver.of(approvalId); return p.length >= 2 ? p : null; }, 30_000, 'the failed try and its retry');
    expect(posts.map((p) => [p.type, p.status])).toEqual([['approval.requested', 500], ['approval.requested', 200]]);
    expect(posts[0].id).toBe(posts[1].id);
    // The designated approvers (admins other than the requester), each with one link, the same on the retry.
    expect(posts[0].links.map((l) => l.user)).toEqual(['admin2', 'admin3']);
    expect(posts[0].links.every((l) => /^http:\/\/127\.0\.0\.1:\d+\/approve\/[\w-]{40,}$/.test(l.url))).toBe(true);
    expect(posts[1].links).toEqual(posts[0].links);
    const stored = await db.pool.query(`SELECT count(*)::int AS n FROM approval_links WHERE approval_id = $1`, [approvalId]);
    expect(stored.rows[0].n).toBe(2);
    // The next event of the approval (1 of 2) links the approver still to decide with the link they already hold.
    await v1(gateways[1].url, `/approvals/${approvalId}/approve`, { token: tokens.admin2, body: {} });
    const progress = await eventually(async () => receiver.of(approvalId).find((p) => p.type === 'approval.progress' && p.status === 200), 30_000, 'the progress event');
    expect(progress.links).toEqual(posts[0].links.filter((l) => l.user === 'admin3'));
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM approval_links WHERE approval_id = $1`, [approvalId])).rows[0].n).toBe(2);
  }, 60_000);

  it('each event is accepted exactly once, whichever gateway wrote it and with both delivering', async () => {
    const ids = [];
    for (const [i, g] of gateways.entries()) {
      const { runId, approvalId } = await pausedDeploy(g, `7.7.${2 + i}`, 'staging');
      await v1(g.url, `/approvals/${approvalId}/approve`, { token: tokens.admin, body: {} });
      await waitForRun(g.url, tokens.admin, runId, (r) => r.status === 'completed');
      ids.push(approvalId);
    }
    for (const approvalId of ids) {
      await eventually(async () => { const d = await deliveries(approvalId); return d.length === 2 && d.every((x) => x.status === 'delivered'); }, 30_000, 'both events delivered');
      const posts = receiver.of(approvalId);
      // requested and decided, each refused once (500) and accepted once (200): never twice.
      expect(posts.map((p) => `${p.type} ${p.status}`).sort()).toEqual(['approval.decided 200', 'approval.decided 500', 'approval.requested 200', 'approval.requested 500']);
      expect((await deliveries(approvalId)).map((d) => d.attempts)).toEqual([2, 2]);
    }
  }, 90_000);

  it('the receiver down: retried on the schedule (shortened by its setting), then delivered once', async () => {
    await receiver.stop();
    const { approvalId } = await pausedDeploy(gateways[1], '7.7.9');
    await eventually(async () => (await deliveries(approvalId)).some((d) => d.status === 'pending' && d.attempts >= 4), 30_000, 'four failed attempts');
    await receiver.start(); // the same port
    await eventually(async () => (await deliveries(approvalId)).every((d) => d.status === 'delivered'), 60_000, 'delivered after the outage');
    const accepted = receiver.of(approvalId).filter((p) => p.status === 200);
    expect(accepted.map((p) => p.type)).toEqual(['approval.requested']);
  }, 120_000);
});
