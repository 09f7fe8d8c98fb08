/**
 * User management (issue 39 items 2, 5 and 6's revocations): `./airlock users …` on DATABASE_URL
 * with the server running, GET/PATCH /api/admin/users, one set of rules (409 for the last admin,
 * for disabling yourself), every change an audit row in the chain naming who made it, and a
 * disabled person refused on their next request with any token they hold.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainWalker } from '../../server/audit/chain.ts';
import { auditChainGenesis, auditChainHeads, auditChainRows } from '../../server/db/audit.ts';
import { ensureDemoUsers } from '../../server/auth/index.ts';
import { firstAdminLine } from '../../server/identity/index.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { usersCli } from '../helpers/users-cli.ts';
import { auditRows, startApi, type ApiHarness } from './api-support.ts';

let api: ApiHarness;
let admin: string;
const cli = (args: string[], stdin?: string) => usersCli(args, { env: { DATABASE_URL: api.db.url }, stdin });
const userId = async (name: string) => (await api.db.pool.query('SELECT id::text FROM users WHERE username = $1', [name])).rows[0].id as string;

beforeAll(async () => {
  api = await startApi();
  admin = await api.login('admin');
});
afterAll(async () => api?.close());

describe('./airlock users', () => {
  it('adds a user with the password from standard input, who can then sign in', async () => {
    const added = await cli(['add', 'Alice', '--role', 'operator', '--password-stdin'], 'alice-password-1\n');
    expect(added).toMatchObject({ code: 0, stdout: 'added alice (operator)\n' });
    expect(await api.login('alice', 'alice-password-1')).toBeTruthy();
  });

  it('generates a password and prints it once when none is given', async () => {
    const added = await cli(['add', 'bob', '--role', 'viewer']);
    expect(added.code).toBe(0);
    const password = /password \(shown once\): (\S+)/.exec(added.stdout)![1];
    expect(password.length).toBeGreaterThanOrEqual(16);
    expect(await api.login('bob', password)).toBeTruthy();
    const reset = await cli(['reset-password', 'bob']);
    const fresh = /\(shown once\): (\S+)/.exec(reset.stdout)![1];
    expect(fresh).not.toBe(password);
    expect((await api.request('POST', '/api/auth/login', { body: { username: 'bob', password } })).status).toBe(401);
    expect(await api.login('bob', fresh)).toBeTruthy();
  });

  it('lists users tab-separated: username role source state last_sign_in', async () => {
    const { stdout, code } = await cli(['list']);
    expect(code).toBe(0);
    expect(stdout.split('\n')).toContain('operator\toperator\tlocal\tenabled\t-');
    expect(stdout).toMatch(/^alice\toperator\tlocal\tenabled\t-$/m);
  });

  it('refuses what the rules refuse, in one line, exit 1; bad usage exits 2', async () => {
    expect(await cli(['add', 'alice', '--role', 'viewer'])).toMatchObject({ code: 1, stderr: 'refused: A user named alice already exists.\n' });
    expect((await cli(['set-role', 'admin', 'viewer'])).stderr).toBe('refused: admin is the last enabled admin.\n');
    expect((await cli(['add', 'carol'])).code).toBe(2);
  });

  it('audits a command-line change as cli, with no user id, in the target user\'s tenant chain', async () => {
    expect((await cli(['set-role', 'bob', 'operator'])).stdout).toBe('bob is now operator\n');
    const [row] = await auditRows(api.db, "operation = 'users.set_role'");
    expect(row).toMatchObject({ username: 'cli', user_id: null, service_actor: 'cli', tenant: 'demo', method: 'CLI' });
    expect(row.arguments).toMatchObject({ user_id: await userId('bob'), target_username: 'bob', role: 'operator', previous_role: 'viewer' });
  });
});

describe('GET/PATCH /api/admin/users', () => {
  it('lists every user to an admin, and to nobody else', async () => {
    const list = await api.request('GET', '/api/admin/users', { token: admin });
    expect(list.status).toBe(200);
    const alice = list.body.users.find((u: { username: string }) => u.username === 'alice');
    expect(alice).toEqual({
      id: await userId('alice'), username: 'alice', display_name: null, email: null, role: 'operator', role_from_claims: false,
      tenant: 'demo', source: 'local', issuer: null, last_sign_in_at: null, disabled_at: null,
    });
    expect((await api.request('GET', '/api/admin/users', { token: await api.login('operator') })).status).toBe(403);
    expect((await api.request('GET', '/api/admin/users')).status).toBe(401);
  });

  it('changes a role, audited with the admin who did it', async () => {
    const id = await userId('viewer');
    const res = await api.request('PATCH', `/api/admin/users/${id}`, { token: admin, body: { role: 'operator' } });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ username: 'viewer', role: 'operator' });
    const [row] = await auditRows(api.db, "operation = 'users.set_role' AND user_id IS NOT NULL");
    expect(row).toMatchObject({ username: 'admin', user_id: await userId('admin'), user_role: 'admin', method: 'PATCH', path: `/api/admin/users/${id}` });
  });

  it('answers 409 CONFLICT for disabling yourself and for demoting the last admin; 400 for a bad body', async () => {
    const me = await userId('admin');
    const self = await api.request('PATCH', `/api/admin/users/${me}`, { token: admin, body: { disabled: true } });
    expect(self.status).toBe(409);
    expect(self.body.error).toMatchObject({ code: 'CONFLICT', details: { reason: 'self' } });
    const demote = await api.request('PATCH', `/api/admin/users/${me}`, { token: admin, body: { role: 'viewer' } });
    expect(demote.body.error).toMatchObject({ code: 'CONFLICT', details: { reason: 'last_admin' } });
    expect((await api.request('PATCH', `/api/admin/users/${me}`, { token: admin, body: {} })).status).toBe(400);
    expect((await api.request('PATCH', `/api/admin/users/${me}`, { token: admin, body: { role: 'root' } })).status).toBe(400);
    expect((await api.request('PATCH', '/api/admin/users/not-a-uuid', { token: admin, body: { role: 'viewer' } })).status).toBe(400);
  });
});

describe('a disabled person', () => {
  it('is refused on the next request with every token they hold, and loses sessions, grants and links', async () => {
    await cli(['add', 'dave', '--role', 'admin', '--password-stdin'], 'dave-password-1\n');
    const id = await userId('dave');
    const bearer = await api.login('dave', 'dave-password-1');
    const login = await fetch(`${api.url}/api/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: api.url }, body: JSON.stringify({ username: 'dave', password: 'dave-password-1', cookie: true }),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const refresh = () => fetch(`${api.url}/api/auth/refresh`, { method: 'POST', headers: { cookie, origin: api.url } });
    expect((await refresh()).status).toBe(200);
    const grant = await api.db.pool.query(`INSERT INTO approval_grants (tool, created_by, scope_tenant, expires_at) VALUES ('start_maintenance', $1, 'demo', now() + interval '1 hour') RETURNING id`, [id]);
    const approval = await api.db.pool.query(
      `INSERT INTO approvals (conversation_id, thread_id, interrupt_id, tool_call_id, tool, args, args_hash, prompt, requested_by, expires_at)
       VALUES (gen_random_uuid(), 't', 'i', 'c', 'deploy', '{}', 'h', 'p', $1, now() + interval '1 hour') RETURNING id`, [await userId('operator')]);
    await api.db.pool.query(`INSERT INTO approval_links (token_hash, approval_id, user_id, action_hash, expires_at) VALUES ('x', $1, $2, 'h', now() + interval '1 hour')`, [approval.rows[0].id, id]);

    const off = await api.request('PATCH', `/api/admin/users/${id}`, { token: admin, body: { disabled: true } });
    expect(off.status).toBe(200);
    expect(off.body.user.disabled_at).not.toBeNull();

    const me = await api.request('GET', '/api/auth/me', { token: bearer });
    expect(me.status).toBe(401);
    expect(me.body.error).toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'user_disabled' } });
    const v1 = await api.request('GET', '/api/admin/users', { token: bearer });
    expect(v1.body.error.details).toMatchObject({ reason: 'user_disabled' });
    expect((await refresh()).status).toBe(401);
    const again = await api.request('POST', '/api/auth/login', { body: { username: 'dave', password: 'dave-password-1' } });
    expect(again.body.error).toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'user_disabled' } });
    expect((await api.db.pool.query('SELECT revoked_at FROM approval_grants WHERE id = $1', [grant.rows[0].id])).rows[0].revoked_at).not.toBeNull();
    expect((await api.db.pool.query("SELECT expires_at <= now() AS over FROM approval_links WHERE token_hash = 'x'")).rows[0].over).toBe(true);
    const [row] = await auditRows(api.db, "operation = 'users.disable'");
    expect(row).toMatchObject({ username: 'admin', tenant: 'demo' });
    expect(row.arguments.revoked).toEqual({ sessions: 2, grants: 1, links: 1 });

    // Enabled again: sign-in only; the old session stays ended.
    expect((await cli(['enable', 'dave'])).stdout).toBe('dave is enabled\n');
    expect(await api.login('dave', 'dave-password-1')).toBeTruthy();
    expect((await refresh()).status).toBe(401);
  });

  it('keeps the audit chain whole through every change', async () => {
    const walk = chainWalker({ genesis: await auditChainGenesis(api.db.pool), from: undefined });
    for await (const r of auditChainRows(api.db.pool, {})) if (walk.push(r)) break;
    expect(walk.end(await auditChainHeads(api.db.pool)).ok).toBe(true);
  });
});

describe('a production start with nobody to sign in', () => {
  it('names the command that creates the first admin, until a user exists', async () => {
    const db = await createTestDatabase();
    try {
      const production = { databaseUrl: db.url, demoUsers: false, oidcIssuer: undefined };
      expect(await firstAdminLine(db.pool, production)).toBe('No users yet: create the first admin with ./airlock users add NAME --role admin --password-stdin');
      expect(await firstAdminLine(db.pool, { ...production, oidcIssuer: 'https://id.example' })).toBeNull();
      expect(await firstAdminLine(db.pool, { ...production, demoUsers: true })).toBeNull();
      expect((await usersCli(['add', 'root', '--role', 'admin', '--password-stdin'], { env: { DATABASE_URL: db.url }, stdin: 'root-password-1\n' })).code).toBe(0);
      expect(await firstAdminLine(db.pool, production)).toBeNull();
    } finally {
      await db.drop();
    }
  });
});

describe('demo users next to single sign-on (decision 5)', () => {
  it('never set a password on a demo name an SSO person holds: that demo user is skipped with one line', async () => {
    const db = await createTestDatabase();
    try {
      await db.pool.query("INSERT INTO users (username, role, source, issuer, subject) VALUES ('admin', 'viewer', 'oidc', 'https://id.example', 'sub-1')");
      const demo = await ensureDemoUsers(db.pool, { demoPassword: 'demo-password-1' });
      expect(demo.skipped).toEqual(['Demo user admin skipped: that name belongs to a oidc user']);
      expect(demo.created.sort()).toEqual(['operator', 'viewer']);
      const { rows } = await db.pool.query("SELECT password_hash, role FROM users WHERE username = 'admin'");
      expect(rows).toEqual([{ password_hash: null, role: 'viewer' }]);
    } finally {
      await db.drop();
    }
  });
});
