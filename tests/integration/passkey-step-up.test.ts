/**
 * Passkey step-up (issue 28 item 3) through the real server, a real PostgreSQL and a software
 * authenticator (tests/helpers/soft-authenticator.ts) answering the server's real WebAuthn options:
 * a rule with `step_up: "passkey"` lets an approval be approved only with the approver's passkey
 * signature over base64url(SHA-256(action_hash ‖ nonce)). Without one, /chat and v1 are refused
 * (403 STEP_UP_REQUIRED); a nonce is used once; a signature over another action is refused; the
 * receipt carries the signature and `./airlock receipt verify` checks it, refusing a tampered one.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpAgent, type BaseEvent, type Interrupt } from '@ag-ui/client';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passkeyChallenge } from '../../server/audit/passkey.ts';
import { collect, connectChat, chat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { SoftAuthenticator } from '../helpers/soft-authenticator.ts';
import { airlockCli } from '../helpers/airlock-cli.ts';
import { pausedDeploy, v1, waitForRun } from './v1-support.ts';

const POLICY = `tool_rules:
  deploy_service:
    action: require_approval
    step_up: passkey
`;

let db: TestDatabase;
let server: TestServer;
let admin: string;
let authenticator: SoftAuthenticator;
const dir = mkdtempSync(join(tmpdir(), 'passkeys-'));

beforeAll(async () => {
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '1', POLICY_FILE: join(dir, 'policy.yaml') } });
  admin = await login(server.url, 'admin');
  authenticator = new SoftAuthenticator(server.url);
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

const pausedApproval = (version: string) => pausedDeploy(server.url, admin, version);

const challengeFor = (approvalId: string) => v1(server.url, `/approvals/${approvalId}/passkey-challenge`, { token: admin, body: {} });
const approve = (approvalId: string, passkey?: unknown) => v1(server.url, `/approvals/${approvalId}/approve`, { token: admin, body: passkey ? { passkey } : {} });

const { airlock, file } = airlockCli(dir);

describe('passkey step-up', () => {
  it('a step-up approval without a passkey registered: the challenge route says to add one', async () => {
    const { approvalId } = await pausedApproval('9.0.0');
    const refused = await challengeFor(approvalId);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'STEP_UP_REQUIRED', message: expect.stringContaining('/settings') });
    expect((await v1(server.url, `/approvals/${approvalId}/deny`, { token: admin, body: {} })).status).toBe(200); // denying needs no passkey
  });

  it('registers, lists and removes a passkey; a registration answer is used once', async () => {
    const options = await v1(server.url, '/passkeys/options', { token: admin, body: {} });
    expect(options.status).toBe(200);
    expect(options.body).toMatchObject({ rp: { id: '127.0.0.1', name: 'Airlock' }, pubKeyCredParams: [{ alg: -7, type: 'public-key' }], authenticatorSelection: { userVerification: 'required' } });
    const response = authenticator.register(options.body);
    const created = await v1(server.url, '/passkeys', { token: admin, body: { name: 'laptop', response } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: authenticator.credentialId, name: 'laptop', last_used_at: null });
    expect((await v1(server.url, '/passkeys', { token: admin, body: { name: 'again', response } })).body.error.code).toBe('VALIDATION_ERROR');
    // A second one, then removed: the list shows the first only.
    const other = new SoftAuthenticator(server.url);
    const second = await v1(server.url, '/passkeys', { token: admin, body: { response: other.register((await v1(server.url, '/passkeys/options', { token: admin, body: {} })).body) } });
    expect(second.status).toBe(201);
    expect((await v1(server.url, `/passkeys/${second.body.id}`, { token: admin, method: 'DELETE' })).status).toBe(204);
    expect((await v1(server.url, `/passkeys/${second.body.id}`, { token: admin, method: 'DELETE' })).status).toBe(404);
    const listed = await v1(server.url, '/passkeys', { token: admin });
    expect(listed.body.passkeys.map((p: { id: string }) => p.id)).toEqual([authenticator.credentialId]);
    // Unknown fields are refused.
    expect((await v1(server.url, '/passkeys', { token: admin, body: { response, extra: 1 } })).status).toBe(400);
  });

  it('/chat confirm and v1 approve without an assertion: 403 STEP_UP_REQUIRED, nothing decided', async () => {
    const client = await connectChat(server.url, admin);
    const paused = await collect(chat(client, 'deploy payments-api 9.1.0 to staging'));
    const card = paused.messages.find((m) => m.metadata.type === 'confirm_required')!;
    const approvalId = card.metadata.approval_id as string;
    const conversationId = paused.final!.metadata.conversation_id as string;
    const confirmed = await collect(client.submit('/chat', { message: 'confirm', conversation_id: conversationId, action: 'confirm', approval_id: approvalId }));
    expect(confirmed.messages.map((m) => m.metadata)).toContainEqual(expect.objectContaining({ type: 'error', code: 'STEP_UP_REQUIRED' }));
    const v1Refused = await approve(approvalId);
    expect(v1Refused.status).toBe(403);
    expect(v1Refused.body.error.code).toBe('STEP_UP_REQUIRED');
    const { rows } = await db.pool.query('SELECT status FROM approvals WHERE id = $1', [approvalId]);
    expect(rows[0].status).toBe('pending');
    expect((await db.pool.query('SELECT 1 FROM approval_decisions WHERE approval_id = $1', [approvalId])).rowCount).toBe(0);
    await client.close?.();
  });

  it('AG-UI resume approved without an assertion: RUN_ERROR STEP_UP_REQUIRED, nothing decided', async () => {
    const agent = new HttpAgent({ url: `${server.url}/api/agent/ag-ui`, headers: { Authorization: `Bearer ${admin}` }, threadId: randomUUID() });
    const events: BaseEvent[] = [];
    agent.subscribe({ onEvent: ({ event }) => void events.push(event) });
    agent.addMessage({ id: randomUUID(), role: 'user', content: 'deploy payments-api 9.1.5 to staging' });
    await agent.runAgent();
    const [interrupt] = (events.at(-1) as unknown as { outcome: { interrupts: Interrupt[] } }).outcome.interrupts;
    events.length = 0;
    await agent.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] }).catch(() => undefined);
    expect(events.find((e) => e.type === 'RUN_ERROR')).toMatchObject({ code: 'STEP_UP_REQUIRED' });
    expect((await db.pool.query('SELECT status FROM approvals WHERE id = $1', [interrupt.id])).rows[0].status).toBe('pending');
  });

  it('a nonce is used once; a signature over another action hash is refused', async () => {
    const { approvalId } = await pausedApproval('9.2.0');
    // Replay: the first try (a bad signature) uses the nonce up; the good one after it is refused.
    const first = (await challengeFor(approvalId)).body;
    const good = authenticator.assert(first.options);
    const bad = { ...good, response: { ...good.response, signature: authenticator.assert(first.options).response.signature } };
    expect((await approve(approvalId, { nonce: first.nonce, response: bad })).body.error.code).toBe('STEP_UP_REQUIRED');
    const replay = await approve(approvalId, { nonce: first.nonce, response: good });
    expect(replay.status).toBe(403);
    expect(replay.body.error).toMatchObject({ code: 'STEP_UP_REQUIRED', message: expect.stringContaining('used already') });
    // A signature over another action's hash with a fresh nonce.
    const second = (await challengeFor(approvalId)).body;
    const elsewhere = authenticator.assert(second.options, passkeyChallenge('0'.repeat(64), second.nonce));
    const wrong = await approve(approvalId, { nonce: second.nonce, response: elsewhere });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.code).toBe('STEP_UP_REQUIRED');
    expect((await db.pool.query('SELECT status FROM approvals WHERE id = $1', [approvalId])).rows[0].status).toBe('pending');
  });

  it('approves with the passkey: the receipt carries its signature, verifies, and a tampered one is refused', async () => {
    const { runId, approvalId } = await pausedApproval('9.3.0');
    const { nonce, options } = (await challengeFor(approvalId)).body;
    const { rows: [approval] } = await db.pool.query('SELECT tool, args, requested_by, action_hash FROM approvals WHERE id = $1', [approvalId]);
    expect(options.challenge).toBe(passkeyChallenge(approval.action_hash, nonce));
    const approved = await approve(approvalId, { nonce, response: authenticator.assert(options) });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', step_up: 'passkey' });
    await waitForRun(server.url, admin, runId, (r) => r.status === 'completed');

    const served = (await v1(server.url, `/approvals/${approvalId}/receipt`, { token: admin })).body;
    const claims = JSON.parse(Buffer.from(served.receipt.split('.')[1], 'base64url').toString());
    const [approver] = claims.approvers;
    expect(Object.keys(approver.passkey).sort()).toEqual(['authenticator_data', 'client_data_json', 'credential_id', 'nonce', 'public_key_jwk', 'signature']);
    expect(approver.passkey).toMatchObject({ credential_id: authenticator.credentialId, nonce, public_key_jwk: { kty: 'EC', crv: 'P-256', ...authenticator.publicKey.export({ format: 'jwk' }) } });
    const jwksUrl = `${server.url}/api/auth/jwks.json`;
    const action = file('action.json', { tool: approval.tool, args: approval.args, user: approval.requested_by });
    expect(await airlock('receipt', 'verify', file('receipt.json', served), '--jwks', jwksUrl, '--action', action)).toEqual({ line: `ok receipt ${approvalId} (approved deploy_service, kid ${served.kid})`, code: 0 });

    // The same claims, the passkey's signature altered, signed by a key the verifier trusts: only
    // the passkey check can refuse it.
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const sig = Buffer.from(approver.passkey.signature, 'base64url');
    sig[sig.length - 1] ^= 1;
    const tampered = { ...claims, approvers: [{ ...approver, passkey: { ...approver.passkey, signature: sig.toString('base64url') } }] };
    const resign = (c: object) => new SignJWT({ ...c }).setProtectedHeader({ alg: 'ES256', kid: 'test', typ: 'airlock-receipt+jwt' }).sign(privateKey);
    const jwks = file('test-jwks.json', { keys: [{ ...(await exportJWK(publicKey)), kid: 'test', alg: 'ES256' }] });
    expect((await airlock('receipt', 'verify', file('same.jws', await resign(claims)), '--jwks', jwks)).code).toBe(0);
    const refused = await airlock('receipt', 'verify', file('tampered.jws', await resign(tampered)), '--jwks', jwks);
    expect(refused).toEqual({ line: 'refused: passkey of admin: the signature does not verify with the passkey', code: 1 });
    // The signed challenge moved to another action: refused too.
    const moved = await airlock('receipt', 'verify', file('moved.jws', await resign({ ...claims, action_hash: '0'.repeat(64) })), '--jwks', jwks);
    expect(moved).toEqual({ line: 'refused: passkey of admin: the signed challenge is not this action hash with its nonce', code: 1 });
  });
});
