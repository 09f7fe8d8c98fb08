/**
 * Faults (issue 41): kill -9 of the gateway between Confirm and an OpenAPI write's answer. The
 * gateway is a real process; it reaches the organization's backend (tests/helpers/openapi-backend.ts,
 * which honours Idempotency-Key) through a proxy that kills it once the refund request is through,
 * so the effect happens for a caller that is gone. The next start resumes the confirmed call and
 * repeats the request with the same Idempotency-Key (`<approval id>:<call id>`): one refund.
 */
import type { Client } from '@gradio/client';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startKillingProxy } from '../helpers/killing-proxy.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { startOpenApiBackend, type OpenApiBackend } from '../helpers/openapi-backend.ts';

const SECRET = 'crash-secret-0123456789abcdef';
let db: TestDatabase;
let dataDir: string;
let api: MainProcess;
let backend: OpenApiBackend;
let token: string;
const started: MainProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'airlock-openapi-crash-'));
  api = await startMain(['--role', 'api'], { DATABASE_URL: db.url, DATA_DIR: dataDir, SERVICE_CLIENT_SECRET: SECRET, DEMO_USERS: 'true' });
  started.push(api);
  token = await login(api.url, 'admin');
  backend = await startOpenApiBackend();
  backend.trust(api.url, 'airlock', 'billing');
}, 60_000);

afterAll(async () => {
  for (const p of started) {
    p.child.kill('SIGKILL');
    await p.exited;
  }
  await backend?.close();
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

async function startGateway(baseUrl: string): Promise<{ gateway: MainProcess; client: Client }> {
  const toolsFile = join(dataDir, `tools-${started.length}.yaml`);
  await writeFile(toolsFile, ['servers:', '  - name: billing', `    openapi: ${backend.url}/openapi.json`, `    base_url: ${baseUrl}`, '    identity: dual_jwt', '    audience: billing'].join('\n'));
  const gateway = await startMain(['--role', 'gateway'], { DATABASE_URL: db.url, DATA_DIR: dataDir, SERVICE_CLIENT_SECRET: SECRET, API_URL: api.url, LEASE_TTL_S: '2', TOOLS_FILE: toolsFile });
  started.push(gateway);
  // The document loads in the background: wait until the source is up (bounded).
  for (let i = 0; i < 300; i++) {
    const status = await (await fetch(`${gateway.url}/api/agent/tools/servers`, { headers: { authorization: `Bearer ${token}` } })).json();
    if (status.servers?.[0]?.status === 'up') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { gateway, client: await connectChat(gateway.url, token) };
}

/** Until the restarted gateway's recovery has resumed the approval and its run has ended (bounded). */
async function untilResumed(id: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const { rows } = await db.pool.query<{ done: boolean }>(
      `SELECT a.resumed_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.conversation_id = a.conversation_id AND r.status = 'running') AS done FROM approvals a WHERE a.id = $1`,
      [id],
    );
    if (rows[0]?.done) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`approval ${id} was not resumed`);
}

describe('kill -9 of the gateway while an approved OpenAPI write is at the backend', () => {
  it('the next start repeats it with the same Idempotency-Key, and the backend refunds once', async () => {
    let gateway: MainProcess | undefined;
    const refund = (url?: string) => url === '/invoices/42/refund';
    const proxy = await startKillingProxy(backend.url, (req) => req.method === 'POST' && refund(req.url), () => gateway?.child.kill('SIGKILL'));
    const first = await startGateway(proxy.url);
    gateway = first.gateway;
    const paused = await collect(chat(first.client, 'refund invoice 42'));
    expect(paused.final!.metadata).toMatchObject({ type: 'confirm_required', tool: 'billing_refund_invoice' });
    const approvalId = paused.final!.metadata.approval_id as string;
    await collect(first.client.submit('/chat', { message: 'confirm', conversation_id: paused.final!.metadata.conversation_id, action: 'confirm', approval_id: approvalId })).catch(() => undefined);
    await gateway.exited;
    first.client.close();
    await proxy.forwarded; // the backend has answered the dead gateway's request: the refund happened
    expect(backend.refunds.get('42')).toBe(1);

    const restarted = await startGateway(backend.url);
    await untilResumed(approvalId);
    const posts = backend.seen.filter((s) => s.method === 'POST' && refund(s.url));
    expect(posts).toHaveLength(2);
    expect(posts[0].headers['idempotency-key']).toMatch(new RegExp(`^${approvalId}:call_`));
    expect(posts[1].headers['idempotency-key']).toBe(posts[0].headers['idempotency-key']);
    expect(posts.map((p) => p.user?.approval_id)).toEqual([approvalId, approvalId]);
    expect(backend.refunds.get('42')).toBe(1);
    await proxy.close();
    restarted.client.close();
  }, 90_000);
});
