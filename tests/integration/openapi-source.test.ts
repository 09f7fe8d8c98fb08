/**
 * The OpenAPI tool source (issue 41) against a real HTTP backend (tests/helpers/openapi-backend.ts:
 * Fastify, its document from @fastify/swagger, both JWTs verified with jose against Airlock's JWKS,
 * its own RBAC on the user token's role), through the real gateway and @gradio/client:
 * a read runs at once; a write pauses for approval, runs once after Confirm with the approval named
 * in the user JWT and the Idempotency-Key; a viewer's confirmed write is refused by the backend's
 * RBAC; a token for another audience or an expired one is refused by the backend; neither token
 * works against Airlock. Then the attacks a hostile model's arguments make (path traversal, header
 * injection, host change, a redirect to another origin), performed on the source itself, and the
 * ToolSource contract suite. Bad entries are down with their reason, and the start goes on.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@gradio/client';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyCipherFor, keyStoreFor, signBackendTokens, SIGNING_ALG, type KeyStore } from '../../server/auth/index.ts';
import { createServiceTokenProvider } from '../../server/agent/index.ts';
import { OpenApiToolSource } from '../../server/agent/openapi/source.ts';
import type { ToolCallContext } from '../../server/agent/tool-source.ts';
import { decideToolPolicy } from '../../server/policy/index.ts';
import { chat, collect, connectChat, login, type WireMessage } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startOpenApiBackend, type OpenApiBackend } from '../helpers/openapi-backend.ts';
import { startTestServer, toolServers, type TestServer } from '../helpers/server.ts';
import { errorCode, runToolSourceContract } from '../helpers/tool-source-contract.ts';

let db: TestDatabase;
let server: TestServer;
let backend: OpenApiBackend;
let elsewhere: Server;
let elsewhereHits = 0;
let dir: string;
let keys: KeyStore;
let admin: Client;
let adminToken: string;

const meta = (m: WireMessage | undefined) => (m?.metadata ?? {}) as Record<string, any>;
const byType = (turn: { messages: WireMessage[] }, type: string) => turn.messages.find((m) => m.metadata.type === type);

beforeAll(async () => {
  backend = await startOpenApiBackend();
  elsewhere = createServer((_req, res) => {
    elsewhereHits++;
    res.end('{"stolen":true}');
  });
  await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
  dir = await mkdtemp(join(tmpdir(), 'airlock-openapi-'));
  await writeFile(join(dir, 'old.yaml'), 'swagger: "2.0"\ninfo: { title: old, version: "1" }\npaths: {}\n');
  const doc = `${backend.url}/openapi.json`;
  await writeFile(join(dir, 'tools.yaml'), [
    'servers:',
    '  - name: billing',
    `    openapi: ${doc}`,
    `    base_url: ${backend.url}`,
    '    identity: dual_jwt',
    '    audience: billing',
    '  - name: ledger', // the same API, tokens for another audience: the backend refuses them
    `    openapi: ${doc}`,
    `    base_url: ${backend.url}`,
    '    identity: dual_jwt',
    '    audience: ledger',
    '    operations: { include: [getInvoice] }',
    '  - name: legacy',
    '    openapi: ./old.yaml',
    '  - name: vault',
    `    openapi: ${doc}`,
    '    identity: { bearer_env: AIRLOCK_TEST_NO_SUCH_TOKEN }',
    '  - name: sneaky',
    `    openapi: ${doc}`,
    `    base_url: ${backend.url}`,
    '    identity: dual_jwt',
    '    audience: "airlock:user"',
    '  - name: remote',
    '    openapi: http://example.com/openapi.json',
    '  - name: billing', // a later duplicate name
    `    openapi: ${doc}`,
  ].join('\n'));
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { TOOLS_FILE: join(dir, 'tools.yaml') } });
  backend.trust(server.url, server.config.jwt.issuer, 'billing');
  keys = keyStoreFor(db.pool, keyCipherFor(server.config));
  adminToken = await login(server.url, 'admin');
  admin = await connectChat(server.url, adminToken);
}, 60_000);

afterAll(async () => {
  admin?.close();
  await server?.close();
  await backend?.close();
  await new Promise<void>((r) => (elsewhere ? elsewhere.close(() => r()) : r()));
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the openapi source in the gateway', () => {
  it('lists its entries with their tools and every bad one down with its reason; the start went on', async () => {
    const status = await toolServers(server.url);
    const named = (name: string) => status.servers.filter((s: { name: string }) => s.name === name);
    expect(named('billing')[0]).toMatchObject({ transport: 'openapi', status: 'up', tools: 7, down_operations: [] });
    expect(named('ledger')[0]).toMatchObject({ status: 'up', tools: 1 });
    expect(named('legacy')[0].last_error).toMatch(/^Swagger 2\.0 is not supported/);
    expect(named('vault')[0].last_error).toBe('the environment variable AIRLOCK_TEST_NO_SUCH_TOKEN (bearer_env) is not set');
    expect(named('sneaky')[0].last_error).toMatch(/audience "airlock:user" is reserved/);
    expect(named('remote')[0].last_error).toMatch(/must be https/);
    expect(named('billing')[1]).toMatchObject({ status: 'down', last_error: 'invalid server entry: the server name "billing" is already used by an earlier server' });
  });

  it('a read runs at once, with both JWTs the backend verified: the gateway and the person', async () => {
    const before = backend.seen.length;
    const turn = await collect(chat(admin, 'get invoice 42'));
    expect(turn.types).not.toContain('confirm_required');
    expect(meta(byType(turn, 'tool_end'))).toMatchObject({ tool: 'billing_get_invoice', output: { id: 42, read_by: 'admin' } });
    const call = backend.seen.slice(before).find((s) => s.url === '/invoices/42')!;
    expect(call.service).toMatchObject({ sub: 'airlock-gateway', aud: 'billing', iss: server.config.jwt.issuer });
    expect(call.user).toMatchObject({ preferred_username: 'admin', role: 'admin', tenant: expect.any(String), tool: 'billing_get_invoice', aud: 'billing' });
    expect(call.user!.exp! - call.user!.iat!).toBeLessThanOrEqual(60);
    expect(call.user!.jti).not.toBe(call.service!.jti);
    expect(call.user!.approval_id).toBeUndefined();
    expect(call.headers['idempotency-key']).toBeUndefined();
    // The tokens reach the backend only: not the events, the transcript or the audit row.
    const conversationId = turn.messages[0].metadata.conversation_id;
    const stored = JSON.stringify((await db.pool.query('SELECT content, metadata FROM messages WHERE conversation_id = $1', [conversationId])).rows);
    const audit = (await db.pool.query("SELECT * FROM audit_log WHERE method = 'HTTP' AND conversation_id = $1", [conversationId])).rows;
    expect(audit[0]).toMatchObject({ operation: 'billing_get_invoice', path: 'GET openapi://billing/invoices/{id}', outcome: 'success', username: 'admin' });
    for (const token of [call.headers.authorization, call.headers['x-user-jwt']].map((t) => String(t).replace('Bearer ', ''))) {
      expect(JSON.stringify(turn.messages)).not.toContain(token);
      expect(stored).not.toContain(token);
      expect(JSON.stringify(audit)).not.toContain(token);
    }
  });

  it('a write pauses with a card naming POST /invoices/{id}/refund, and runs once after Confirm, the approval in its user JWT', async () => {
    const paused = await collect(chat(admin, 'refund invoice 42'));
    const card = meta(byType(paused, 'confirm_required'));
    expect(card.tool).toBe('billing_refund_invoice');
    expect(JSON.stringify(card)).toContain('POST /invoices/{id}/refund');
    expect(backend.refunds.get('42') ?? 0).toBe(0);
    const before = backend.seen.length;
    const done = await collect(chat(admin, 'confirm', card.conversation_id, 'confirm'));
    expect(meta(byType(done, 'tool_end'))).toMatchObject({ tool: 'billing_refund_invoice', output: { refunded: 42, by: 'admin' } });
    expect(backend.refunds.get('42')).toBe(1);
    const calls = backend.seen.slice(before).filter((s) => s.method === 'POST');
    expect(calls).toHaveLength(1);
    const row = (await db.pool.query('SELECT id, action_hash FROM approvals WHERE id = $1', [card.approval_id])).rows[0];
    expect(calls[0].user).toMatchObject({ approval_id: row.id, action_hash: row.action_hash, role: 'admin' });
    expect(calls[0].headers['idempotency-key']).toMatch(new RegExp(`^${row.id}:.+`));
  }, 30_000);

  it("a viewer's confirmed write is refused by the backend's RBAC, and the model is told so", async () => {
    const viewer = await connectChat(server.url, await login(server.url, 'viewer'));
    try {
      const paused = await collect(chat(viewer, 'refund invoice 7'));
      const card = meta(byType(paused, 'confirm_required'));
      expect(card.tool).toBe('billing_refund_invoice');
      const done = await collect(chat(viewer, 'confirm', card.conversation_id, 'confirm'));
      const end = meta(byType(done, 'tool_error'));
      expect(end).toMatchObject({ tool: 'billing_refund_invoice', code: 'FORBIDDEN' });
      expect(end.error).toBe('The API "billing" answered HTTP 403 to POST /invoices/{id}/refund: {"error":"role viewer may not refund"}');
      expect(done.messages.at(-1)!.content).toMatch(/could not run billing_refund_invoice: you don't have permission/);
      expect(backend.refunds.get('7') ?? 0).toBe(0);
    } finally {
      viewer.close();
    }
  }, 30_000);

  it('tokens for another audience are refused by the backend; an expired one too; neither kind works against Airlock', async () => {
    const before = backend.seen.length;
    const turn = await collect(chat(admin, 'get the ledger invoice 5'));
    expect(meta(byType(turn, 'tool_error'))).toMatchObject({ tool: 'ledger_get_invoice', code: 'UNAUTHORIZED' });
    expect(backend.seen.slice(before).find((s) => s.url === '/invoices/5')?.refused).toMatch(/aud/);

    const fresh = await signBackendTokens(keys, { issuer: server.config.jwt.issuer, audience: 'billing', clientId: 'airlock-gateway', user: { id: 'u', username: 'admin', role: 'admin', tenant: 't' }, tool: 'x' });
    const { kid, key } = await keys.signingKey();
    const past = Math.floor(Date.now() / 1000) - 600;
    const expired = await new SignJWT({ role: 'admin' }).setProtectedHeader({ alg: SIGNING_ALG, kid, typ: 'backend-user+jwt' })
      .setIssuer(server.config.jwt.issuer).setAudience('billing').setSubject('u').setIssuedAt(past).setExpirationTime(past + 60).setJti('j').sign(key);
    const answer = await fetch(`${backend.url}/invoices/1`, { headers: { authorization: `Bearer ${fresh.service}`, 'x-user-jwt': expired } });
    expect(answer.status).toBe(401);
    expect(backend.seen.at(-1)!.refused).toMatch(/exp/);

    const airlock = await fetch(`${server.url}/api/tools/capabilities`, { headers: { authorization: `Bearer ${fresh.service}`, 'x-user-jwt': fresh.user } });
    expect(airlock.status).toBe(401);
    const asUser = await fetch(`${server.url}/api/agent/tools/servers`, { headers: { authorization: `Bearer ${fresh.user}` } });
    expect(asUser.status).toBe(401);
  }, 30_000);
});

/** The source on its own, as the gateway builds it, for the attacks and the contract. */
async function ownSource(): Promise<OpenApiToolSource> {
  const source = new OpenApiToolSource({
    entries: [{ ok: true, server: { name: 'billing', openapi: `${backend.url}/openapi.json`, base_url: backend.url, identity: 'dual_jwt', audience: 'billing', transport: 'openapi' } }],
    dir, timeoutMs: 5_000, resultMaxChars: 2_000, reservedNames: [],
    mintTokens: (call) => signBackendTokens(keys, { issuer: server.config.jwt.issuer, clientId: 'airlock-gateway', ...call }),
  });
  source.start();
  await source.settled();
  return source;
}

const user = { id: 'u-admin', username: 'admin', tenant: 'default' };
const runOf = () => ({
  apiUrl: server.url, userToken: adminToken, user, conversationId: 'c-attacks',
  serviceToken: createServiceTokenProvider({ apiUrl: () => server.url, credentials: { clientId: 'x', clientSecret: 'y' } }), timeoutMs: 5_000, fetch,
});
let n = 0;
const allowed = (): ToolCallContext => ({ toolCallId: `call_attack_${++n}`, run: { ...runOf(), policy: (tool) => decideToolPolicy(null, { tenant: 'default', username: 'admin' }, tool, 'allow') } });
const contentOf = (r: unknown) => (typeof r === 'string' ? r : String((r as { content: unknown }).content));

describe("a hostile model's arguments never leave the configured origin", () => {
  let source: OpenApiToolSource;
  beforeAll(async () => {
    source = await ownSource();
  });

  it('path traversal stays one segment', async () => {
    const before = backend.seen.length;
    const result = await source.call(user, 'billing_get_customer', { name: '../admin' }, allowed());
    expect(errorCode(result)).toBeNull();
    expect(backend.seen.slice(before).map((s) => s.url)).toEqual(['/customers/..%2Fadmin']);
    expect(JSON.parse(contentOf(result))).toEqual({ name: '../admin' });
    expect(errorCode(await source.call(user, 'billing_get_customer', { name: '..' }, allowed()))).toBe('VALIDATION_ERROR');
    expect(backend.seen.slice(before).some((s) => s.url.startsWith('/admin'))).toBe(false);
  });

  it('no header injection, no credential or host from the arguments, only declared parameters', async () => {
    const before = backend.seen.length;
    const injected = await source.call(user, 'billing_refund_invoice', { id: 3, 'x-request-note': 'a\r\nAuthorization: Bearer evil' }, allowed());
    expect(errorCode(injected)).toBe('VALIDATION_ERROR');
    const sneaky = { body: { amount: 5, customer: 'acme' }, authorization: 'Bearer evil', Authorization: 'Bearer evil', host: 'evil.example', 'x-user-jwt': 'evil', cookie: 'a=b', url: 'http://evil.example/', extra: 'x' };
    const result = await source.call(user, 'billing_create_invoice', sneaky, allowed());
    expect(errorCode(result)).toBeNull();
    const seen = backend.seen.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0].headers.host).toBe(new URL(backend.url).host);
    expect(String(seen[0].headers.authorization)).not.toContain('evil');
    expect(seen[0].headers['x-user-jwt']).not.toBe('evil');
    expect(seen[0].headers.cookie).toBeUndefined();
    expect(seen[0].url).toBe('/invoices');
    expect(seen[0].user).toMatchObject({ preferred_username: 'admin' });
  });

  it('a redirect to another origin is not followed', async () => {
    const to = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/steal`;
    const result = await source.call(user, 'billing_go_elsewhere', { to }, allowed());
    expect(errorCode(result)).toBe('TOOL_FAILURE');
    expect(contentOf(result)).toContain('redirected to another origin');
    expect(elsewhereHits).toBe(0);
  });
});

describe('results and timeouts', () => {
  it('a long answer is cut for the model at TOOL_RESULT_MAX_CHARS with a note; the card keeps it whole', async () => {
    const source = await ownSource();
    const result = await source.call(user, 'billing_get_big_report', {}, allowed()) as { content: string; artifact: { output: unknown; truncated: boolean } };
    expect(result.content).toMatch(/\n\[Result cut: 5011 characters, only the first 2000 are shown\.\]$/);
    expect(result.artifact).toMatchObject({ truncated: true, output: { text: 'x'.repeat(5_000) } });
  });

  it("an answer that never comes ends at the entry's timeout_ms as a tool error; the run goes on", async () => {
    const source = new OpenApiToolSource({
      entries: [{ ok: true, server: { name: 'billing', openapi: `${backend.url}/openapi.json`, base_url: backend.url, identity: 'none', timeout_ms: 300, transport: 'openapi' } }],
      dir, timeoutMs: 60_000, resultMaxChars: 2_000, reservedNames: [],
    });
    source.start();
    await source.settled();
    const result = await source.call(user, 'billing_get_never_report', {}, allowed());
    expect(errorCode(result)).toBe('TOOL_FAILURE');
    expect(contentOf(result)).toContain('The API \\"billing\\" timed out after 300 ms.');
    expect(source.status().servers[0].last_error).toBe('The API "billing" timed out after 300 ms.');
  });
});

runToolSourceContract('openapi', async () => ({
  source: await ownSource(),
  sample: { tool: 'billing_get_invoice', args: { id: 9 } },
  run: runOf(),
  close: async () => {},
}));

/** Runs a child without blocking this process (the gateway it asks for the JWKS runs here). */
function run(file: string, args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8' }, (error, stdout, stderr) => resolve({ status: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

/** The README's code block (`lang`) under "What a backend checks", as an operator would copy it. */
async function readmeSnippet(lang: 'js' | 'python'): Promise<string> {
  const readme = await readFile(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
  const from = readme.indexOf('What a backend checks');
  const block = readme.slice(from).match(new RegExp('```' + lang + '\\n([\\s\\S]*?)```'));
  return block![1].replaceAll('https://airlock.example', server.url).replaceAll("'airlock'", `'${server.config.jwt.issuer}'`).replaceAll('"airlock"', `"${server.config.jwt.issuer}"`);
}

describe("the README's lines for a backend", () => {
  it('verify the tokens a call carried, with jose (Node) and PyJWT (Debian python3-jwt, which the test command installs)', async () => {
    const before = backend.seen.length;
    const turn = await collect(chat(admin, 'get invoice 8'));
    expect(meta(byType(turn, 'tool_end')).tool).toBe('billing_get_invoice');
    const call = backend.seen.slice(before).find((s) => s.url === '/invoices/8')!;
    const headers = { authorization: String(call.headers.authorization), 'x-user-jwt': String(call.headers['x-user-jwt']) };
    const js = `${await readmeSnippet('js')}\nconsole.log(JSON.stringify(await callerOf({ headers: ${JSON.stringify(headers)} })));`;
    const node = await run(process.execPath, ['--input-type=module', '-e', js]);
    expect(node.stderr).toBe('');
    expect(JSON.parse(node.stdout)).toMatchObject({ preferred_username: 'admin', role: 'admin', tool: 'billing_get_invoice', aud: 'billing' });
    // The service token where the user token belongs is refused: its typ.
    const swapped = await run(process.execPath, ['--input-type=module', '-e', `${await readmeSnippet('js')}\nawait callerOf({ headers: ${JSON.stringify({ authorization: headers.authorization, 'x-user-jwt': headers.authorization.slice(7) })} });`]);
    expect(swapped.status).not.toBe(0);
    expect(swapped.stderr).toMatch(/typ/);

    const python = '/usr/bin/python3';
    // PyJWT comes from Debian (tests/helpers/system-packages.ts), never PyPI: missing is a failure, not a skip.
    expect((await run(python, ['-c', 'import jwt, cryptography'])).status).toBe(0);
    const py = `${await readmeSnippet('python')}\nimport json\nprint(json.dumps(caller_of({"Authorization": ${JSON.stringify(headers.authorization)}, "X-User-JWT": ${JSON.stringify(headers['x-user-jwt'])}})))\n`;
    const ran = await run(python, ['-c', py]);
    expect(ran.stderr).toBe('');
    expect(JSON.parse(ran.stdout)).toMatchObject({ preferred_username: 'admin', role: 'admin', tool: 'billing_get_invoice' });
  }, 30_000);
});
