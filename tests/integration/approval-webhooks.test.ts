/**
 * Approval webhooks end to end (issue 26 item 3): the api and the gateway as real processes with
 * APPROVAL_WEBHOOKS naming a real local HTTP receiver (JSON) and a second one (Slack format). The
 * receiver checks each POST's Airlock-Signature against the raw body and reads the body: an
 * approval opened, counted 1 of 2, decided; without PUBLIC_URL no link is sent and the body says
 * so. With the receiver down, the outbox keeps retrying
 * (attempts recorded, the metrics show it pending); once it is back the event is delivered, once.
 * A receiver answering 307 (to an address of its own that counts the POSTs reaching it) is a failed
 * delivery, "HTTP 307", and the redirect is never followed (issue 36 item 5).
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
import { login, serviceToken } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { eventually, v1, waitForRun } from './v1-support.ts';

const SECRET = 'webhooks-secret-0123456789abcdef';
const JSON_SECRET = 'json-receiver-secret-0123';
const SLACK_SECRET = 'slack-receiver-secret-0123';

interface Received {
  body: any;
  signed: boolean;
}

/** A real receiver on a fixed port that can be stopped and started again. */
class Receiver {
  received: Received[] = [];
  #server: Server | null = null;
  port = 0;
  constructor(private readonly secret: string) {}
  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const signed = verifyWebhook(this.secret, String(req.headers['airlock-signature'] ?? ''), raw, Math.floor(Date.now() / 1000));
        this.received.push({ body: JSON.parse(raw), signed });
        res.writeHead(signed ? 200 : 401).end();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
  }
  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()));
    this.#server?.closeAllConnections();
  }
}

/** A real endpoint answering 307 to `/internal` on itself (loopback): any POST there followed the redirect. */
let redirector: Server;
let redirectorUrl: string;
let followed = 0;

let db: TestDatabase;
let dir: string;
let api: MainProcess;
let gateway: MainProcess;
const json = new Receiver(JSON_SECRET);
const slack = new Receiver(SLACK_SECRET);
const tokens: Record<string, string> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'airlock-webhooks-'));
  await writeFile(join(dir, 'policy.yaml'), TWO_ADMIN_POLICY);
  await json.start();
  await slack.start();
  redirector = createServer((req, res) => {
    req.resume();
    if (req.url === '/internal') followed++;
    res.writeHead(req.url === '/internal' ? 200 : 307, { location: '/internal' }).end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
  redirectorUrl = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/redirecting`;
  // A file, as APPROVAL_WEBHOOKS allows (a value not starting with "[").
  await writeFile(join(dir, 'webhooks.json'), JSON.stringify([
    { url: `http://127.0.0.1:${json.port}/hook`, secret: JSON_SECRET },
    { url: `http://127.0.0.1:${slack.port}/slack`, secret: SLACK_SECRET, format: 'slack', events: ['approval.requested'] },
    { url: redirectorUrl, secret: JSON_SECRET, events: ['approval.requested'] },
  ]));
  api = await startMain(['--role', 'api'], { DATABASE_URL: db.url, DATA_DIR: dir, SERVICE_CLIENT_SECRET: SECRET });
  const hash = await hashPassword('demo-password-1');
  for (const u of ['admin2', 'admin3']) await db.pool.query(`INSERT INTO users (username, password_hash, role, tenant) VALUES ($1, $2, 'admin', 'demo')`, [u, hash]);
  for (const u of ['admin', 'admin2', 'admin3', 'operator']) tokens[u] = await login(api.url, u);
  gateway = await startMain(['--role', 'gateway'], {
    DATABASE_URL: db.url, DATA_DIR: dir, SERVICE_CLIENT_SECRET: SECRET, API_URL: api.url, POLICY_FILE: join(dir, 'policy.yaml'),
    // No PUBLIC_URL (the ready line would name it, not this process): no link, and the body says so.
    APPROVAL_WEBHOOKS: join(dir, 'webhooks.json'), OFFLINE_MODEL_DELAY_MS: '1',
  });
}, 60_000);

afterAll(async () => {
  for (const p of [gateway, api]) {
    p?.child.kill('SIGKILL');
    await p?.exited;
  }
  await json.stop();
  await slack.stop();
  redirector?.closeAllConnections();
  await new Promise((resolve) => redirector?.close(resolve));
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function pausedDeploy(version: string): Promise<{ runId: string; approvalId: string }> {
  const run = await v1(gateway.url, '/runs', { token: tokens.admin, body: { messages: [{ role: 'user', content: `deploy payments-api ${version} to production` }] } });
  const paused = await waitForRun(gateway.url, tokens.admin, run.body.run_id, (r) => r.status === 'awaiting_approval');
  return { runId: run.body.run_id, approvalId: paused.approval_request_ids[0] };
}

const of = (r: Receiver, approvalId: string) => r.received.filter((x) => x.body.approval?.id === approvalId || JSON.stringify(x.body).includes(approvalId));

describe('approval webhooks', () => {
  it('posts signed JSON for opened, 1 of 2 and decided, and a Slack message for opened', async () => {
    const { runId, approvalId } = await pausedDeploy('8.8.1');
    await v1(gateway.url, `/approvals/${approvalId}/approve`, { token: tokens.admin2, body: {} });
    await v1(gateway.url, `/approvals/${approvalId}/approve`, { token: tokens.admin3, body: {} });
    await waitForRun(gateway.url, tokens.admin, runId, (r) => r.status === 'completed');

    const got = await eventually(async () => { const g = of(json, approvalId); return g.length >= 3 ? g : null; }, 20_000, 'three JSON deliveries');
    expect(got.every((g) => g.signed)).toBe(true);
    expect(got.map((g) => g.body.type)).toEqual(['approval.requested', 'approval.progress', 'approval.decided']);
    expect(got[0].body).toMatchObject({ schema: 'airlock.approval_webhook.v1', approval: { id: approvalId, status: 'pending', approvals_required: 2, approved_by: [] }, links: [] });
    expect(got[0].body.note).toMatch(/PUBLIC_URL is not set, so no link is sent/);
    expect(got[1].body.approval).toMatchObject({ status: 'pending', approved_by: ['admin2'] });
    expect(got[2].body.approval).toMatchObject({ status: 'approved', approved_by: ['admin2', 'admin3'] });
    expect(new Set(got.map((g) => g.body.id)).size).toBe(3);

    const slackGot = await eventually(async () => { const g = of(slack, approvalId); return g.length >= 1 ? g : null; }, 20_000, 'the Slack delivery');
    expect(slackGot).toHaveLength(1); // events: only approval.requested
    expect(slackGot[0].signed).toBe(true);
    expect(slackGot[0].body.blocks.map((b: { type: string }) => b.type)).toEqual(['header', 'section', 'section', 'context', 'context']);
    expect(JSON.stringify(slackGot[0].body.blocks[4])).toContain('PUBLIC_URL is not set');
  }, 60_000);

  it('the receiver down: retried with backoff from the outbox, then delivered once when it is back', async () => {
    await json.stop();
    const { approvalId } = await pausedDeploy('8.8.2');
    // Failed attempts are recorded while it is down.
    await eventually(async () => {
      const { rows } = await db.pool.query(
        `SELECT d.attempts FROM approval_webhook_deliveries d JOIN approval_outbox o ON o.id = d.event_id WHERE o.approval_id = $1 AND d.url LIKE '%/hook' AND d.status = 'pending' AND d.attempts >= 2`,
        [approvalId],
      );
      return rows.length > 0;
    }, 30_000, 'two failed attempts');
    // Visible in the metrics meanwhile.
    const metrics = await v1(gateway.url, '/metrics', { token: await serviceToken(api.url, SECRET) });
    expect(metrics.body.webhooks.pending).toBeGreaterThanOrEqual(1);
    await json.start(); // the same port
    const got = await eventually(async () => { const g = of(json, approvalId); return g.length >= 1 ? g : null; }, 30_000, 'the delivery after the outage');
    // Once: nothing more arrives for it on the next rounds.
    await eventually(async () => {
      const { rows } = await db.pool.query(`SELECT d.status FROM approval_webhook_deliveries d JOIN approval_outbox o ON o.id = d.event_id WHERE o.approval_id = $1 AND d.url LIKE '%/hook'`, [approvalId]);
      return rows.every((r) => r.status === 'delivered');
    }, 10_000, 'recorded as delivered');
    expect(of(json, approvalId).filter((g) => g.body.type === 'approval.requested')).toHaveLength(1);
    expect(got[0].signed).toBe(true);
  }, 90_000);
});

describe('a receiver answering with a redirect', () => {
  it('307 is a failed delivery ("HTTP 307"), retried, and never followed', async () => {
    const { approvalId } = await pausedDeploy('8.8.3');
    const row = await eventually(async () => {
      const { rows } = await db.pool.query<{ status: string; attempts: number; last_error: string | null }>(
        `SELECT d.status, d.attempts, d.last_error FROM approval_webhook_deliveries d JOIN approval_outbox o ON o.id = d.event_id WHERE o.approval_id = $1 AND d.url = $2 AND d.attempts >= 1`,
        [approvalId, redirectorUrl],
      );
      return rows[0];
    }, 30_000, 'the first attempt at the redirecting endpoint');
    expect(row).toMatchObject({ status: 'pending', last_error: 'HTTP 307' });
    // The POST, its body and its signature went nowhere else (the follow-up would have come before the attempt was recorded).
    expect(followed).toBe(0);
  }, 60_000);
});

describe('escalation', () => {
  it('nobody answered within escalate.after_s: one approval.escalated notification', async () => {
    const run = await v1(gateway.url, '/runs', { token: tokens.operator, body: { messages: [{ role: 'user', content: 'start maintenance on payments-api for 30 minutes because of a fan swap' }] } });
    const paused = await waitForRun(gateway.url, tokens.operator, run.body.run_id, (r) => r.status === 'awaiting_approval');
    const approvalId: string = paused.approval_request_ids[0];
    const got = await eventually(async () => { const g = of(json, approvalId).filter((x) => x.body.type === 'approval.escalated'); return g.length ? g : null; }, 30_000, 'the escalation');
    expect(got[0]).toMatchObject({ signed: true, body: { type: 'approval.escalated', approval: { id: approvalId, status: 'pending', tool_name: 'start_maintenance' } } });
    // Once: decided afterwards, no second escalation.
    await v1(gateway.url, `/approvals/${approvalId}/approve`, { token: tokens.admin, body: {} });
    await eventually(async () => of(json, approvalId).some((x) => x.body.type === 'approval.decided'), 20_000, 'the decision');
    expect(of(json, approvalId).filter((x) => x.body.type === 'approval.escalated')).toHaveLength(1);
  }, 60_000);

  it('escalation routes as well as notifies: once escalated, the further role may decide it', async () => {
    const run = await v1(gateway.url, '/runs', { token: tokens.operator, body: { messages: [{ role: 'user', content: 'create a task to rotate the payments-api certificates' }] } });
    const paused = await waitForRun(gateway.url, tokens.operator, run.body.run_id, (r) => r.status === 'awaiting_approval');
    const approvalId: string = paused.approval_request_ids[0];
    // admin2's to approve: admin3 sees it (approvals:decide) but may not approve it yet.
    const early = await v1(gateway.url, `/approvals/${approvalId}/approve`, { token: tokens.admin3, body: {} });
    expect(early).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
    expect(early.body.error.message).toContain('1 of admin2');
    // Ten minutes pass for it (escalate.after_s 600): it escalates to every admin.
    await db.pool.query(`UPDATE approvals SET created_at = created_at - interval '601 seconds' WHERE id = $1`, [approvalId]);
    await eventually(async () => of(json, approvalId).some((x) => x.body.type === 'approval.escalated'), 30_000, 'the escalation');
    const late = await v1(gateway.url, `/approvals/${approvalId}/approve`, { token: tokens.admin3, body: {} });
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ status: 'approved', approved_by: ['admin3'] });
    const done = await waitForRun(gateway.url, tokens.operator, run.body.run_id, (r) => r.status === 'completed');
    expect(done.status).toBe('completed');
  }, 60_000);
});
