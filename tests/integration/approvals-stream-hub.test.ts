/**
 * Issue 36 item 4: the approvals streams' one shared listener (server/v1/approvals-hub.ts).
 * - The in-memory visibility rule (`approvalVisibleTo`) over a tenant's list read once gives each
 *   viewer exactly what `listApprovalRecords` gives them (requester, named users and roles, the
 *   tenant's deciders, escalation past and not yet due, another tenant).
 * - N streams and a burst of changes cost one read of the approvals per change, not one per stream
 *   (the audit: 1,000 streams of one viewer slowed everyone's answers).
 * - Per user, APPROVAL_STREAMS_PER_USER (8) streams; the 9th is 429 RATE_LIMITED with Retry-After 5.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalVisibleTo, listApprovalRecords, type ApprovalViewer } from '../../server/db/approval-records.ts';
import { createApproval } from '../../server/db/approvals.ts';
import { createConversation } from '../../server/db/conversations.ts';
import type { Pool } from '../../server/db/index.ts';
import type { CommitListener, Ledger } from '../../server/engine/index.ts';
import { createApprovalHub, type ApprovalsFrame } from '../../server/v1/approvals-hub.ts';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let db: TestDatabase;
const users: Record<string, { id: string; username: string; role: string; tenant: string }> = {};
const conversations: Record<string, string> = {};

async function addUser(username: string, role: string, tenant: string) {
  const { rows } = await db.pool.query<{ id: string }>(`INSERT INTO users (username, password_hash, role, tenant) VALUES ($1, 'x', $2, $3) RETURNING id::text`, [username, role, tenant]);
  users[username] = { id: rows[0].id, username, role, tenant };
  conversations[username] = (await createConversation(db.pool, { userId: rows[0].id, title: `${username}'s` })).id;
}

async function approval(requester: string, o: { users?: string[]; roles?: string[]; escalate?: { afterS: number; roles: string[] }; ageS?: number } = {}) {
  const u = users[requester];
  const a = await createApproval(db.pool, {
    conversationId: conversations[requester], threadId: conversations[requester], interruptId: randomUUID(), toolCallId: randomUUID(), tool: 'deploy_service',
    args: { service: 'checkout-api' }, argsHash: 'h', actionHash: 'h', prompt: 'deploy?', requestedBy: u.id, expiresAt: new Date(Date.now() + 3_600_000),
    terms: { required: 1, roles: o.roles ?? [], users: o.users ?? [], distinctFromRequester: false }, escalate: o.escalate ?? null,
  });
  if (o.ageS) await db.pool.query(`UPDATE approvals SET created_at = now() - $2 * interval '1 second' WHERE id = $1`, [a.id, o.ageS]);
  return a.id;
}

const viewerOf = (name: string): ApprovalViewer => {
  const u = users[name];
  return { tenant: u.tenant, userId: u.role === 'admin' ? null : u.id, approver: { username: u.username, role: u.role } };
};

/** A pool whose reads of the approvals list are counted. */
function counting(pool: Pool): { pool: Pool; reads: () => number } {
  let n = 0;
  const wrapped = new Proxy(pool, {
    get(target, key, receiver) {
      if (key !== 'query') return Reflect.get(target, key, receiver);
      return (text: string, ...rest: unknown[]) => {
        if (typeof text === 'string' && text.includes('FROM approvals a')) n += 1;
        return (target.query as (...a: unknown[]) => unknown)(text, ...rest);
      };
    },
  });
  return { pool: wrapped, reads: () => n };
}

/** A ledger whose commits the test makes (only `subscribe` is used by the hub). */
function fakeLedger() {
  const listeners = new Set<CommitListener>();
  const ledger = { subscribe: (_id: string, l: CommitListener) => (listeners.add(l), () => listeners.delete(l)) } as unknown as Ledger;
  return { ledger, commit: (conversationId: string) => listeners.forEach((l) => l(1, conversationId)), listeners };
}

beforeAll(async () => {
  db = await createTestDatabase();
  for (const [name, role, tenant] of [
    ['ad1', 'admin', 'acme'], ['ad2', 'admin', 'acme'], ['op1', 'operator', 'acme'], ['op2', 'operator', 'acme'],
    ['vw1', 'viewer', 'acme'], ['vw2', 'viewer', 'acme'], ['other', 'operator', 'beta'],
  ] as const) await addUser(name, role, tenant);
}, 60_000);

afterAll(async () => db?.drop());

describe('the in-memory visibility rule', () => {
  it('gives every viewer exactly what listApprovalRecords gives them', async () => {
    await approval('op1');
    await approval('op1', { roles: ['admin'] });
    await approval('op2', { users: ['vw1'] });
    await approval('vw1', { roles: ['operator'] });
    await approval('op1', { roles: ['admin'], escalate: { afterS: 60, roles: ['viewer'] }, ageS: 600 }); // escalated to viewers
    await approval('op2', { roles: ['admin'], escalate: { afterS: 3600, roles: ['operator'] } }); // not yet
    await approval('vw2', { users: ['op2'], roles: ['viewer'] });
    await approval('other', { roles: ['operator'] });
    const now = new Date();
    const tenants = new Map<string, Awaited<ReturnType<typeof listApprovalRecords>>>();
    for (const t of ['acme', 'beta']) tenants.set(t, await listApprovalRecords(db.pool, { tenant: t, userId: null, status: 'pending', limit: 1000 }));
    const lists = new Set<string>();
    for (const name of Object.keys(users)) {
      const viewer = viewerOf(name);
      const sql = (await listApprovalRecords(db.pool, { ...viewer, status: 'pending', limit: 1000 })).map((r) => r.id);
      const memory = tenants.get(viewer.tenant)!.filter((r) => approvalVisibleTo(r, viewer, now)).map((r) => r.id);
      expect(memory, name).toEqual(sql);
      lists.add(sql.join(','));
    }
    // The cases differ: the viewers' lists are not all alike (the comparison is not vacuous).
    expect(lists.size).toBeGreaterThanOrEqual(5);
  });
});

describe('one shared listener', () => {
  it('N streams and a burst of changes read the list once per change, and each stream gets its own list', async () => {
    const { pool, reads } = counting(db.pool);
    const { ledger, commit, listeners } = fakeLedger();
    const hub = createApprovalHub({ pool, ledger, perUser: 8, log: { warn: () => {} } });
    const frames = new Map<string, ApprovalsFrame[]>();
    const names = ['ad1', 'ad2', 'op1', 'op2', 'vw1', 'vw2'];
    const closes = names.map((name) => {
      frames.set(name, []);
      return hub.open({ ...viewerOf(name), capKey: name }, (f) => frames.get(name)!.push(f));
    });
    await expect.poll(() => names.every((n) => frames.get(n)!.length === 1)).toBe(true);
    expect(listeners.size).toBe(1);
    expect(reads()).toBe(1); // the first frames shared one read too
    for (const name of names) {
      const own = await listApprovalRecords(db.pool, { ...viewerOf(name), status: 'pending', limit: 1000 });
      expect(frames.get(name)![0].approvals.map((a) => a.id)).toEqual(own.map((r) => r.id));
    }

    // A new approval everyone in the tenant may see, then a burst of commits: one read.
    const id = await approval('op1', { roles: ['admin', 'operator', 'viewer'] });
    for (let i = 0; i < 5; i += 1) commit(conversations.op1);
    await expect.poll(() => names.every((n) => frames.get(n)!.length === 2)).toBe(true);
    expect(reads()).toBe(2);
    for (const name of names) expect(frames.get(name)![1].approvals.map((a) => a.id)).toContain(id);

    // A change in another tenant (no stream of it here) reads nothing; the next change here reads once.
    commit(conversations.other);
    const second = await approval('op2', { roles: ['admin', 'operator', 'viewer'] });
    commit(conversations.op2);
    await expect.poll(() => names.every((n) => frames.get(n)!.length === 3)).toBe(true);
    expect(reads()).toBe(3);
    for (const name of names) expect(frames.get(name)![2].approvals.map((a) => a.id)).toContain(second);
    closes.forEach((close) => close());
    hub.stop();
  });
});

describe('the per-user cap', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ db });
  }, 60_000);
  afterAll(async () => server?.close());

  it('the 9th stream of a user is 429 RATE_LIMITED with Retry-After 5; another user, or a closed slot, is served', async () => {
    const token = await login(server.url, 'viewer');
    const open = (t: string, signal: AbortSignal) => fetch(`${server.url}/api/agent/v1/approvals/stream`, { headers: { authorization: `Bearer ${t}` }, signal });
    const aborts = Array.from({ length: 8 }, () => new AbortController());
    try {
      const first = await open(token, aborts[0].signal);
      expect(first.status).toBe(200);
      // The route sends the viewer's list at once (the hub's first read), as an `approvals` frame.
      const reader = first.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      while (!/event: approvals\ndata: \{"approvals":\[/.test(text)) text += (await reader.read()).value ?? '';
      for (const a of aborts.slice(1)) expect((await open(token, a.signal)).status).toBe(200);
      const ninth = await open(token, new AbortController().signal);
      expect(ninth.status).toBe(429);
      expect(ninth.headers.get('retry-after')).toBe('5');
      expect(await ninth.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
      const other = new AbortController();
      expect((await open(await login(server.url, 'operator'), other.signal)).status).toBe(200);
      other.abort();
      // A closed stream frees its slot (once the server saw it close).
      aborts[0].abort();
      await expect.poll(async () => {
        const again = new AbortController();
        const res = await open(token, again.signal);
        if (res.status === 200) aborts[0] = again;
        else await res.body?.cancel();
        return res.status;
      }).toBe(200);
    } finally {
      aborts.forEach((a) => a.abort());
    }
  }, 60_000);
});
