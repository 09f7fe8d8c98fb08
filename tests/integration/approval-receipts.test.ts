/**
 * Approval receipts (issue 28 item 2) through the real server and the real CLI: a paused run's
 * approval has no receipt (404); once decided, GET /approvals/{id}/receipt answers {receipt, kid},
 * a compact ES256 JWS whose kid is in /api/auth/jwks.json, whose audit_hash is the decision's audit
 * row in the chain, and which `./airlock receipt verify` accepts with the served JWKS (by URL or
 * file) and the action it names. A wrong key under the same kid, an edited action and a truncated
 * receipt are refused; another tenant's user cannot read it. The export (item 4) of the same
 * database verifies offline with `./airlock audit verify --file`, and a tampered line is named.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../server/auth/index.ts';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { airlockCli } from '../helpers/airlock-cli.ts';
import { pausedDeploy, v1, waitForRun } from './v1-support.ts';

let db: TestDatabase;
let server: TestServer;
let admin: string;
let stranger: string;
const dir = mkdtempSync(join(tmpdir(), 'receipts-'));

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '1' } });
  await db.pool.query(`INSERT INTO users (username, password_hash, role, tenant) VALUES ('stranger', $1, 'admin', 'other')`, [await hashPassword('demo-password-1')]);
  admin = await login(server.url, 'admin');
  stranger = await login(server.url, 'stranger');
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

const pausedApproval = (version: string) => pausedDeploy(server.url, admin, version);

async function cli(...args: string[]): Promise<{ line: string; code: number }> {
  return airlock('receipt', 'verify', ...args);
}

const { airlock, file } = airlockCli(dir);

describe('approval receipts', () => {
  it('signs a decided approval; the CLI verifies it against a fresh JWKS and its action, and refuses forgeries', async () => {
    const { runId, approvalId } = await pausedApproval('8.1.0');
    expect((await v1(server.url, `/approvals/${approvalId}/receipt`, { token: admin })).status).toBe(404);
    expect((await v1(server.url, `/approvals/${approvalId}/approve`, { token: admin, body: { reason: 'ok' } })).status).toBe(200);
    await waitForRun(server.url, admin, runId, (r) => r.status === 'completed');

    const served = await v1(server.url, `/approvals/${approvalId}/receipt`, { token: admin });
    expect(served.status).toBe(200);
    expect(Object.keys(served.body).sort()).toEqual(['kid', 'receipt']);
    expect(decodeProtectedHeader(served.body.receipt)).toEqual({ alg: 'ES256', kid: served.body.kid, typ: 'airlock-receipt+jwt' });
    expect((await v1(server.url, `/approvals/${approvalId}/receipt`, { token: stranger })).status).toBe(404);

    const jwksUrl = `${server.url}/api/auth/jwks.json`;
    const jwks = await (await fetch(jwksUrl)).json();
    expect(jwks.keys.map((k: { kid: string }) => k.kid)).toContain(served.body.kid);
    const { rows: [approval] } = await db.pool.query('SELECT tool, args, requested_by, action_hash FROM approvals WHERE id = $1', [approvalId]);
    const action = { tool: approval.tool, args: approval.args, user: approval.requested_by };
    const receiptFile = file('receipt.json', served.body);
    const actionFile = file('action.json', action);

    const ok = await cli(receiptFile, '--jwks', jwksUrl, '--action', actionFile);
    expect(ok).toEqual({ line: `ok receipt ${approvalId} (approved deploy_service, kid ${served.body.kid})`, code: 0 });
    expect((await cli(file('receipt.jws', served.body.receipt), '--jwks', file('jwks.json', jwks))).code).toBe(0);

    // The claims, as the decisions name them; audit_hash is the decision row's chain hash.
    const claims = JSON.parse(Buffer.from(served.body.receipt.split('.')[1], 'base64url').toString());
    expect(Object.keys(claims).sort()).toEqual(['action_hash', 'approval_id', 'approvers', 'audit_hash', 'decision', 'iat', 'nonce', 'policy_hash', 'requester', 'tool'].sort());
    expect(claims).toMatchObject({ approval_id: approvalId, action_hash: approval.action_hash, tool: 'deploy_service', decision: 'approved', requester: 'admin' });
    expect(claims.approvers).toEqual([{ user: 'admin', decided_at: expect.any(String), channel: 'v1' }]);
    const { rows: [audited] } = await db.pool.query(`SELECT hash FROM audit_log WHERE operation = 'approval.approve' AND arguments->>'approval_id' = $1 AND outcome = 'success'`, [approvalId]);
    expect(claims.audit_hash).toBe(audited.hash);

    // A key that is not the server's, under the same kid.
    const { publicKey } = await generateKeyPair('ES256');
    const wrong = { keys: [{ ...(await exportJWK(publicKey)), kid: served.body.kid, alg: 'ES256', use: 'sig' }] };
    const forged = await cli(receiptFile, '--jwks', file('wrong.json', wrong));
    expect(forged.code).toBe(1);
    expect(forged.line).toMatch(/^refused: signature: /);
    // The action edited after the approval.
    const edited = await cli(receiptFile, '--jwks', jwksUrl, '--action', file('edited.json', { ...action, args: { ...action.args, version: '9.9.9' } }));
    expect(edited.code).toBe(1);
    expect(edited.line).toMatch(/^refused: action: its hash [0-9a-f]{64} is not the receipt's action_hash /);
    // A truncated receipt.
    const truncated = await cli(file('truncated.jws', served.body.receipt.slice(0, -10)), '--jwks', jwksUrl);
    expect(truncated.code).toBe(1);
    expect(truncated.line).toMatch(/^refused: signature: /);
  });

  it('a denial gets its receipt too', async () => {
    const { approvalId } = await pausedApproval('8.2.0');
    expect((await v1(server.url, `/approvals/${approvalId}/deny`, { token: admin, body: {} })).status).toBe(200);
    const served = await v1(server.url, `/approvals/${approvalId}/receipt`, { token: admin });
    const claims = JSON.parse(Buffer.from(served.body.receipt.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ decision: 'denied', approvers: [{ user: 'admin', channel: 'v1' }] });
  });
});

describe('the audit export', () => {
  const exported = async (query = '', token = admin) => {
    const res = await fetch(`${server.url}/api/audit/export${query}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };
  /** The checkpoint key as a reviewer gets it: from the server (public), kept in a file of their own. */
  const keyFile = async () => file('checkpoint-key.json', await (await fetch(`${server.url}/api/audit/checkpoint-key`)).json());
  const verifyFile = async (text: string) => airlock('audit', 'verify', '--file', file('export.jsonl', text), '--checkpoint-key', await keyFile());

  it('streams the JWKS, the rows with hashes, the receipts and the heads; verifies offline; names a tampered line', async () => {
    const { runId, approvalId } = await pausedApproval('8.3.0');
    expect((await v1(server.url, `/approvals/${approvalId}/approve`, { token: admin, body: {} })).status).toBe(200);
    await waitForRun(server.url, admin, runId, (r) => r.status === 'completed'); // the deploy's own audit row is in
    const all = await exported();
    expect(all.status).toBe(200);
    expect(all.type).toMatch(/^application\/x-ndjson/);
    const lines = all.text.trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines[0].keys.length).toBeGreaterThan(0);
    expect(lines[1]).toMatchObject({ type: 'chain', genesis: expect.any(String), from: null, to: null });
    const rows = lines.filter((l) => l.type === 'row');
    const { rows: [{ n }] } = await db.pool.query('SELECT count(*)::int AS n FROM audit_log WHERE hash IS NOT NULL');
    expect(rows).toHaveLength(n);
    expect(lines.filter((l) => l.type === 'receipt').map((l) => l.approval_id)).toContain(approvalId);
    expect(lines.filter((l) => l.type === 'head').length).toBeGreaterThan(0);
    // The export signed each head first (issue 36 item 3): a signed head as new as each tenant's rows.
    const signed = lines.filter((l) => l.type === 'checkpoint');
    for (const head of lines.filter((l) => l.type === 'head' && l.last_id !== null)) {
      expect(signed.find((c) => c.tenant === head.tenant && c.last_id === head.last_id)).toMatchObject({ hash: head.hash, jws: expect.any(String) });
    }
    expect(await verifyFile(all.text)).toEqual({ line: `ok ${n} rows`, code: 0 });

    // A row edited in the file.
    const target = rows[1];
    const edited = all.text.replace(JSON.stringify(target), JSON.stringify({ ...target, outcome: 'denied' }));
    expect(await verifyFile(edited)).toEqual({ line: `tampered: row ${target.id} (changed: its content does not match its hash)`, code: 1 });
    // A row left out.
    const removed = all.text.replace(`${JSON.stringify(rows[0])}\n`, '');
    expect((await verifyFile(removed)).line).toMatch(new RegExp(`^tampered: row \\d+ \\((prev_hash|removed)`));
    // A receipt whose signature was altered.
    const receipt = lines.find((l) => l.type === 'receipt' && l.approval_id === approvalId);
    const sig = receipt.receipt.split('.')[2];
    const flipped = { ...receipt, receipt: `${receipt.receipt.slice(0, -sig.length)}${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}` };
    const forged = await verifyFile(all.text.replace(JSON.stringify(receipt), JSON.stringify(flipped)));
    expect(forged.code).toBe(1);
    expect(forged.line).toMatch(new RegExp(`^tampered: receipt ${approvalId} \\(signature: `));
    // A line that is not JSON.
    expect(await verifyFile(all.text.replace('\n', '\n{oops\n'))).toEqual({ line: 'tampered: line 2 (not JSON)', code: 1 });
  });

  it('exports a range of ids; refuses a viewer and a bad id', async () => {
    const { rows } = await db.pool.query<{ id: string }>('SELECT id::text FROM audit_log a WHERE hash IS NOT NULL ORDER BY a.id LIMIT 3');
    const part = await exported(`?from=${rows[1].id}&to=${rows[2].id}`);
    expect(part.status).toBe(200);
    expect(await verifyFile(part.text)).toEqual({ line: 'ok 2 rows', code: 0 });
    const viewer = await login(server.url, 'viewer');
    expect((await exported('', viewer)).status).toBe(403);
    const bad = await exported('?from=abc');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
  });
});
