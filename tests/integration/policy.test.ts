/**
 * The tool policy end to end (issue 11 part B): a real POLICY_FILE, the real gateway and api,
 * @gradio/client on /chat, PostgreSQL. Deny hides the tool from the model and refuses a call that
 * still reaches it (a policy tightened while an approval waited: a second gateway with the stricter
 * file takes the confirm); caution runs and is flagged in the wire, the ledger and the audit row;
 * a rule naming a dangerous tool lowers its approval for one user while default_action never does;
 * tenants; the dry-run check and the effective policy over real HTTP.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import type { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login, serviceToken, type WireMessage } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const POLICY = `# the seed's shape, with the policy key
policy:
  default_action: allow            # never lowers a dangerous tool
  tool_rules:
    check_health: caution
    deploy_service: deny
    filesystem_read_file: caution  # MCP tools: a rule ranks above their annotations
    filesystem_write_file: deny
  tenant_rules:
    acme:
      tools:
        check_health: deny
  user_rules:
    demo:admin:
      tools:
        start_maintenance: allow   # names the tool: lowers the approval for admin only
    demo:operator:
      tools:
        end_maintenance:           # issue 26: a list, the first entry matching the arguments wins
          - action: deny
            when: {service: [billing, ledger]}
          - action: require_approval
            approvals: {count: 2, roles: [admin], distinct_from_requester: true}
`;
// The second gateway's file: the same, but deploy_service only needs approval... on the first
// gateway (no policy file) deploy pauses; this one denies it when the confirm arrives.
const STRICT = `tool_rules:\n  deploy_service: deny\n  chek_health: deny   # a typo: denies nothing, and /v1/policy says so\n`;

let db: TestDatabase;
let server: TestServer;
let strict: TestServer;
let plain: TestServer;
let dir: string;
let files: string;
const FS_SERVER = resolve('node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const clients: Client[] = [];

const meta = (m: WireMessage | undefined) => (m?.metadata ?? {}) as Record<string, unknown>;
const connect = async (url: string, user: string) => {
  const c = await connectChat(url, await login(url, user));
  clients.push(c);
  return c;
};
const ledger = async (conversationId: string, kind: string) =>
  (await db.pool.query('SELECT payload FROM conversation_events WHERE conversation_id = $1 AND kind = $2 ORDER BY seq', [conversationId, kind])).rows.map((r) => r.payload);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-policy-'));
  await writeFile(join(dir, 'policy.yaml'), POLICY);
  await writeFile(join(dir, 'strict.yaml'), STRICT);
  files = await mkdtemp(join(tmpdir(), 'airlock-policy-files-'));
  await writeFile(join(files, 'readme.txt'), 'The door opens inward.\n');
  await writeFile(join(dir, 'tools.yaml'), `servers:\n  - name: filesystem\n    command: ${process.execPath}\n    args: [${JSON.stringify(FS_SERVER)}, ${JSON.stringify(files)}]\n`);
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { POLICY_TENANT_CACHE_S: '0', POLICY_FILE: join(dir, 'policy.yaml'), TOOLS_FILE: join(dir, 'tools.yaml'), MCP_TIMEOUT_MS: '5000' } });
  strict = await startTestServer({ db, env: { POLICY_FILE: join(dir, 'strict.yaml') } });
  plain = await startTestServer({ db });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await server?.close();
  await strict?.close();
  await plain?.close();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (files) await rm(files, { recursive: true, force: true });
});

describe('deny', () => {
  it('hides the tool from the model: a deploy request calls nothing and pauses nothing', async () => {
    const admin = await connect(server.url, 'admin');
    const turn = await collect(chat(admin, 'deploy checkout-api 2.4.1 to staging'));
    expect(turn.status).toBe('complete');
    expect(turn.types).not.toContain('tool_start');
    expect(turn.types).not.toContain('confirm_required');
    const id = turn.final!.metadata.conversation_id;
    expect(await ledger(id, 'tool.call')).toEqual([]);
    // the same request on a gateway without the rule is offered the tool and pauses
    const other = await collect(chat(await connect(plain.url, 'admin'), 'deploy checkout-api 2.4.1 to staging'));
    expect(other.types).toContain('confirm_required');
  });

  it('refuses a call that still reaches the tool: a confirm after the policy was tightened never deploys', async () => {
    // Paused on a gateway whose built-in default needs approval …
    const first = await collect(chat(await connect(plain.url, 'admin'), 'deploy payments-api 9.9.9 to staging'));
    const card = first.messages.find((m) => m.metadata.type === 'confirm_required');
    expect(meta(card)).toMatchObject({ tool: 'deploy_service' });
    const conversationId = card!.metadata.conversation_id;
    const approvalId = String(meta(card).approval_id);
    const row = (await db.pool.query('SELECT policy_scope, policy_action, policy_matched FROM approvals WHERE id = $1', [approvalId])).rows[0];
    expect(row).toEqual({ policy_scope: 'builtin', policy_action: 'require_approval', policy_matched: false });
    const [requested] = await ledger(conversationId, 'approval.requested');
    expect(requested.policy).toEqual({ scope: 'builtin', action: 'require_approval', matched: false });

    // … confirmed on a gateway whose policy now denies it: the tool re-runs from the top and refuses.
    const confirm = await collect(chat(await connect(strict.url, 'admin'), 'confirm', conversationId, 'confirm'));
    const error = confirm.messages.find((m) => m.metadata.type === 'tool_error');
    expect(meta(error)).toMatchObject({ tool: 'deploy_service', code: 'FORBIDDEN' });
    expect(String(meta(error).error)).toMatch(/tool policy does not allow deploy_service \(tool:deploy_service\)/);
    const deployments = await db.pool.query(`SELECT 1 FROM deployments WHERE version = '9.9.9'`);
    expect(deployments.rowCount).toBe(0);
    const calls = await ledger(conversationId, 'tool.call');
    expect(calls.at(-1)).toMatchObject({ tool: 'deploy_service', policy: { scope: 'tool:deploy_service', action: 'deny', matched: true } });
    const toolCallId = calls.at(-1).tool_call_id;
    // The permission check before the pause is a show_capabilities row of its own, with no decision of its own.
    const check = (await db.pool.query(`SELECT policy_action FROM audit_log WHERE tool_call_id = $1 AND operation = 'show_capabilities'`, [toolCallId])).rows;
    expect(check).toEqual([{ policy_action: null }]);
    const audit = (await db.pool.query(`SELECT * FROM audit_log WHERE tool_call_id = $1 AND operation = 'deploy_service'`, [toolCallId])).rows;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      operation: 'deploy_service', outcome: 'denied', status_code: 403, error_code: 'FORBIDDEN', username: 'admin',
      policy_action: 'deny', policy_scope: 'tool:deploy_service', policy_matched: true,
    });
  });
});

describe('caution', () => {
  it('runs, and is flagged on the wire, in the ledger and in the audit row', async () => {
    const operator = await connect(server.url, 'operator');
    const turn = await collect(chat(operator, "what's the health of payments-api"));
    expect(turn.status).toBe('complete');
    const start = turn.messages.find((m) => m.metadata.type === 'tool_start');
    expect(meta(start)).toMatchObject({ tool: 'check_health', policy: { scope: 'tool:check_health', action: 'caution', matched: true } });
    expect(String(meta(start).title)).toContain('(caution)');
    expect(turn.types).toContain('tool_end');
    const id = turn.final!.metadata.conversation_id;
    const [call] = await ledger(id, 'tool.call');
    expect(call.policy).toEqual({ scope: 'tool:check_health', action: 'caution', matched: true });
    const audit = (await db.pool.query('SELECT * FROM audit_log WHERE tool_call_id = $1', [call.tool_call_id])).rows;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ operation: 'check_health', outcome: 'success', policy_action: 'caution', policy_scope: 'tool:check_health', policy_matched: true });
  });

  it('an allowed call is audited as allowed by default_action', async () => {
    const operator = await connect(server.url, 'operator');
    const turn = await collect(chat(operator, 'list recent deployments'));
    const id = turn.final!.metadata.conversation_id;
    const [call] = await ledger(id, 'tool.call');
    expect(call).toMatchObject({ tool: 'list_deployments', policy: { scope: 'default', action: 'allow', matched: true } });
    const audit = (await db.pool.query('SELECT policy_action, policy_scope FROM audit_log WHERE tool_call_id = $1', [call.tool_call_id])).rows;
    expect(audit).toEqual([{ policy_action: 'allow', policy_scope: 'default' }]);
  });

  it('a user cannot forge the policy headers: the api believes them only behind the service token', async () => {
    const token = await login(server.url, 'operator');
    const res = await fetch(`${server.url}/api/tools/health`, {
      headers: { authorization: `Bearer ${token}`, 'x-user-jwt': token, 'x-policy-action': 'allow', 'x-policy-scope': 'user:forged', 'x-tool-call-id': 'forged-1' },
    });
    expect(res.status).toBe(401);
    const audit = (await db.pool.query(`SELECT policy_action, policy_scope FROM audit_log WHERE tool_call_id = 'forged-1'`)).rows;
    expect(audit).toEqual([{ policy_action: null, policy_scope: null }]);
  });
});

describe('MCP tools under the same policy', () => {
  it('deny hides an MCP tool (its annotations would ask for approval): nothing is written', async () => {
    const target = join(files, 'notes.txt');
    const turn = await collect(chat(await connect(server.url, 'admin'), `write hello to ${target}`));
    expect(turn.types).not.toContain('tool_start');
    expect(turn.types).not.toContain('confirm_required');
    expect(await stat(target).then(() => true, () => false)).toBe(false);
  });

  it('caution on a read-only MCP tool: it runs, flagged on the wire and in its audit row', async () => {
    const turn = await collect(chat(await connect(server.url, 'admin'), `read the file ${join(files, 'readme.txt')}`));
    const start = turn.messages.find((m) => m.metadata.type === 'tool_start');
    expect(meta(start)).toMatchObject({ tool: 'filesystem_read_file', policy: { scope: 'tool:filesystem_read_file', action: 'caution', matched: true } });
    expect(turn.types).toContain('tool_end');
    const audit = (await db.pool.query('SELECT * FROM audit_log WHERE tool_call_id = $1', [meta(start).tool_call_id])).rows;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ method: 'MCP', outcome: 'success', policy_action: 'caution', policy_scope: 'tool:filesystem_read_file', policy_matched: true });
  });
});

describe('the built-in approval is a floor', () => {
  const maintenance = 'start maintenance on db-primary for 30 minutes because of a disk upgrade';
  it('default_action allow does not lower it: the operator is still asked', async () => {
    const turn = await collect(chat(await connect(server.url, 'operator'), maintenance));
    const card = turn.messages.find((m) => m.metadata.type === 'confirm_required');
    expect(meta(card)).toMatchObject({ tool: 'start_maintenance' });
    const row = (await db.pool.query('SELECT policy_scope, policy_action, policy_matched FROM approvals WHERE id = $1', [meta(card).approval_id])).rows[0];
    expect(row).toEqual({ policy_scope: 'builtin', policy_action: 'require_approval', policy_matched: false });
  });

  it('a user rule naming the tool lowers it for that user only: admin runs it at once', async () => {
    const turn = await collect(chat(await connect(server.url, 'admin'), maintenance.replace('db-primary', 'search-api')));
    expect(turn.types).not.toContain('confirm_required');
    const start = turn.messages.find((m) => m.metadata.type === 'tool_start');
    expect(meta(start)).toMatchObject({ tool: 'start_maintenance', policy: { scope: 'user:demo:admin', action: 'allow', matched: true } });
    expect(turn.types).toContain('tool_end');
    const audit = (await db.pool.query('SELECT outcome, policy_action, policy_scope, policy_matched FROM audit_log WHERE tool_call_id = $1', [meta(start).tool_call_id])).rows;
    expect(audit).toEqual([{ outcome: 'success', policy_action: 'allow', policy_scope: 'user:demo:admin', policy_matched: true }]);
  });
});

describe('tenants', () => {
  it("a tenant rule applies to that tenant's users (users.tenant)", async () => {
    await db.pool.query(`UPDATE users SET tenant = 'acme' WHERE username = 'viewer'`);
    try {
      const turn = await collect(chat(await connect(server.url, 'viewer'), "what's the health of payments-api"));
      expect(turn.types).not.toContain('tool_start');
      const token = await login(server.url, 'viewer');
      const check = await (await fetch(`${server.url}/api/agent/v1/policy/check`, {
        method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ tool_name: 'check_health' }),
      })).json();
      expect(check).toMatchObject({ user_key: 'acme:viewer', tenant_key: 'acme', policy_scope: 'tenant:acme', policy_action: 'deny', should_allow: false });
    } finally {
      await db.pool.query(`UPDATE users SET tenant = 'demo' WHERE username = 'viewer'`);
    }
  });
});

describe('POST /api/agent/v1/policy/check', () => {
  const check = async (auth: Record<string, string>, body: unknown) => {
    const res = await fetch(`${server.url}/api/agent/v1/policy/check`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };

  it("answers the seed's dry run for the service token, any user_key", async () => {
    const svc = { authorization: `Bearer ${await serviceToken(server.url)}` };
    const res = await check(svc, { tool_name: 'start_maintenance', tool_args: { service: 'db' }, user_key: 'demo:admin', tenant_key: 'demo' });
    expect(res).toEqual({
      status: 200,
      body: {
        tool_name: 'start_maintenance', user_key: 'demo:admin', tenant_key: 'demo', level: 'safe', reason: 'Policy user:demo:admin allows start_maintenance',
        pattern_matched: null, policy_scope: 'user:demo:admin', policy_action: 'allow', policy_matched: true, requires_confirmation: false, approvals_required: 0, should_allow: true,
      },
    });
    const other = await check(svc, { tool_name: 'start_maintenance', user_key: 'demo:operator' });
    expect(other.body).toMatchObject({ policy_scope: 'builtin', policy_action: 'require_approval', level: 'danger', requires_confirmation: true, should_allow: true });
    const exec = await check(svc, { tool_name: 'exec', user_key: 'pska:user_primary' });
    expect(exec.body).toMatchObject({ tenant_key: 'pska', policy_action: 'require_approval', policy_scope: 'builtin' });
  });

  it('evaluates tool_args against the rules with when (issue 26)', async () => {
    const svc = { authorization: `Bearer ${await serviceToken(server.url)}` };
    const ledger = await check(svc, { tool_name: 'end_maintenance', tool_args: { service: 'ledger' }, user_key: 'demo:operator' });
    expect(ledger.body).toMatchObject({ policy_scope: 'user:demo:operator', policy_action: 'deny', should_allow: false, reason: 'Policy user:demo:operator denies end_maintenance when service=billing|ledger' });
    const web = await check(svc, { tool_name: 'end_maintenance', tool_args: { service: 'web' }, user_key: 'demo:operator' });
    expect(web.body).toMatchObject({ policy_scope: 'user:demo:operator', policy_action: 'require_approval', requires_confirmation: true, approvals_required: 2 });
  });

  it('a user checks only themselves: another user_key or tenant_key is FORBIDDEN', async () => {
    const user = { authorization: `Bearer ${await login(server.url, 'operator')}` };
    expect((await check(user, { tool_name: 'check_health' })).body).toMatchObject({ user_key: 'demo:operator', policy_action: 'caution' });
    expect(await check(user, { tool_name: 'check_health', user_key: 'demo:admin' })).toEqual({
      status: 403, body: { type: 'error', error: { code: 'FORBIDDEN', message: 'user_key must be your own.' } },
    });
    expect((await check(user, { tool_name: 'check_health', tenant_key: 'acme' })).status).toBe(403);
    // on behalf: the service token with X-User-JWT is the user, with the same limit
    const onBehalf = { authorization: `Bearer ${await serviceToken(server.url)}`, 'x-user-jwt': user.authorization.slice(7) };
    expect((await check(onBehalf, { tool_name: 'check_health', user_key: 'demo:operator' })).status).toBe(200);
    expect((await check(onBehalf, { tool_name: 'check_health', user_key: 'demo:admin' })).status).toBe(403);
  });

  it('bad input and no token get taxonomy errors in the v1 shape', async () => {
    const svc = { authorization: `Bearer ${await serviceToken(server.url)}` };
    const missing = await check(svc, { user_key: 'demo:admin' });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ type: 'error', error: { code: 'VALIDATION_ERROR' } });
    expect((await check(svc, { tool_name: 'x', user_key: 'nocolon' })).body.error.code).toBe('VALIDATION_ERROR');
    expect((await check(svc, { tool_name: 'x', user_key: 'a:b', tenant_key: 'c' })).body.error.code).toBe('VALIDATION_ERROR');
    expect((await check(svc, { tool_name: 'x', extra: 1 })).status).toBe(400);
    const none = await check({}, { tool_name: 'x' });
    expect(none).toMatchObject({ status: 401, body: { type: 'error', error: { code: 'UNAUTHORIZED' } } });
    const forged = await check({ authorization: 'Bearer eyJhbGciOiJub25lIiwidHlwIjoic2VydmljZStqd3QifQ.e30.' }, { tool_name: 'x' });
    expect(forged.status).toBe(401);
  });
});

describe('GET /api/agent/v1/policy', () => {
  it('the service sees every rule and the built-in defaults', async () => {
    const res = await fetch(`${server.url}/api/agent/v1/policy`, { headers: { authorization: `Bearer ${await serviceToken(server.url)}` } });
    const body = await res.json();
    expect(res.status).toBe(200);
    expect(body.policy.tenant_rules).toHaveProperty('acme');
    expect(body.policy.user_rules).toHaveProperty(['demo:admin']);
    // the catalog's dangerous operations and the MCP tools whose annotations ask for approval
    expect(body.builtin.require_approval).toEqual(expect.arrayContaining(['deploy_service', 'end_maintenance', 'start_maintenance', 'filesystem_write_file']));
    expect(body.builtin.require_approval).not.toContain('filesystem_read_file');
    expect(body.builtin.defaults).toMatchObject({ filesystem_read_file: 'allow', check_health: 'allow', deploy_service: 'require_approval' });
    expect(body.effective).toBeNull();
    expect(body.unknown_tools).toEqual([]);
  });

  it('names rule tools that match no tool (a misspelt deny denies nothing)', async () => {
    const res = await fetch(`${strict.url}/api/agent/v1/policy`, { headers: { authorization: `Bearer ${await serviceToken(strict.url)}` } });
    expect((await res.json()).unknown_tools).toEqual(['chek_health (tool_rules)']);
  });

  it("a user sees only their tenant's and their own rules, and their effective action per tool", async () => {
    const res = await fetch(`${server.url}/api/agent/v1/policy`, { headers: { authorization: `Bearer ${await login(server.url, 'operator')}` } });
    const body = await res.json();
    expect(body.policy.tenant_rules).toEqual({});
    // Their own rules, as written (a list with when, issue 26).
    expect(body.policy.user_rules).toEqual({
      'demo:operator': { tools: { end_maintenance: [{ action: 'deny', when: { service: ['billing', 'ledger'] } }, { action: 'require_approval', approvals: { count: 2, roles: ['admin'], distinct_from_requester: true } }] } },
    });
    expect(body.policy.tool_rules).toEqual({ check_health: 'caution', deploy_service: 'deny', filesystem_read_file: 'caution', filesystem_write_file: 'deny' });
    const byTool = Object.fromEntries(body.effective.tools.map((t: { tool_name: string; policy_action: string }) => [t.tool_name, t.policy_action]));
    expect(byTool).toMatchObject({
      check_health: 'caution', deploy_service: 'deny', start_maintenance: 'require_approval', create_task: 'allow',
      filesystem_read_file: 'caution', filesystem_write_file: 'deny', filesystem_create_directory: 'caution', filesystem_list_directory: 'allow',
    });
    expect(byTool).not.toHaveProperty('list_tasks'); // api-only: not an agent tool
    expect(body.effective.user_key).toBe('demo:operator');
  });
});
