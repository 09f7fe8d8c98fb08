/**
 * The table modules the api and the gateway share: conversations, messages, leases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConversation, getConversationForUser, listConversations } from '../../server/db/conversations.ts';
import { appendMessage, listMessages, patchNewestByMetadata, updateMessage } from '../../server/db/messages.ts';
import { getLease, isLeaseHeld, releaseLease, renewLease, setLeaseState, tryTakeLease } from '../../server/db/leases.ts';
import { getRun, listOrphanedRuns } from '../../server/db/runs.ts';
import { registerProcess } from '../../server/db/processes.ts';
import { openExistingConversationTurn, openNewConversationTurn } from '../../server/db/turn-opening.ts';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
let userId: string;
let otherId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO users (username, password_hash, role) VALUES ('alice', 'x', 'viewer'), ('bob', 'x', 'viewer') RETURNING id`,
  );
  [userId, otherId] = [rows[0].id, rows[1].id];
});
afterAll(() => db.drop());

describe('conversations', () => {
  it('derives the title from text, keeps an explicit one, uses a placeholder otherwise', async () => {
    const derived = await createConversation(db.pool, { userId, text: '  Deploy   checkout-api to staging  ' });
    expect(derived.title).toBe('Deploy checkout-api to staging');
    const long = await createConversation(db.pool, { userId, text: 'x'.repeat(100) });
    expect(long.title).toHaveLength(60);
    expect(long.title.endsWith('…')).toBe(true);
    const explicit = await createConversation(db.pool, { userId, title: 'Mine', text: 'ignored' });
    expect(explicit.title).toBe('Mine');
    const blank = await createConversation(db.pool, { userId });
    expect(blank.title).toBe('New conversation');
    await appendMessage(db.pool, { conversationId: blank.id, role: 'assistant', content: 'Hello, how can I help?' });
    await appendMessage(db.pool, { conversationId: blank.id, role: 'user', content: 'Check payments latency' });
    await appendMessage(db.pool, { conversationId: blank.id, role: 'user', content: 'And errors' });
    const after = await getConversationForUser(db.pool, { id: blank.id, userId });
    expect(after?.title).toBe('Check payments latency');
    expect(after!.updatedAt.getTime()).toBeGreaterThanOrEqual(blank.updatedAt.getTime());
  });

  it('is null for another user, a missing id and a malformed id', async () => {
    const conv = await createConversation(db.pool, { userId, title: 'private' });
    expect(await getConversationForUser(db.pool, { id: conv.id, userId: otherId })).toBeNull();
    expect(await getConversationForUser(db.pool, { id: crypto.randomUUID(), userId })).toBeNull();
    expect(await getConversationForUser(db.pool, { id: 'nope', userId })).toBeNull();
  });

  it('maps database errors to the taxonomy: taken id -> CONFLICT, unknown conversation -> NOT_FOUND', async () => {
    const conv = await createConversation(db.pool, { userId, title: 'taken' });
    await expect(createConversation(db.pool, { userId: otherId, id: conv.id })).rejects.toMatchObject({ code: 'CONFLICT' });
    const withId = await createConversation(db.pool, { userId, id: crypto.randomUUID(), text: 'chosen id' });
    expect(withId.title).toBe('chosen id');
    await expect(
      appendMessage(db.pool, { conversationId: crypto.randomUUID(), role: 'user', content: 'x' }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(appendMessage(db.pool, { conversationId: 'junk', role: 'user', content: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('finds conversations by message text', async () => {
    const conv = await createConversation(db.pool, { userId: otherId, title: 'Plain title' });
    await appendMessage(db.pool, { conversationId: conv.id, role: 'assistant', content: 'The kafka consumer lag is rising' });
    const page = await listConversations(db.pool, { userId: otherId, archived: false, query: 'kafka', limit: 10 });
    expect(page.items.map((c) => c.id)).toEqual([conv.id]);
  });
});

describe('messages', () => {
  it('appends idempotently by request_id and refuses a different payload', async () => {
    const conv = await createConversation(db.pool, { userId });
    const first = await appendMessage(db.pool, { conversationId: conv.id, role: 'user', content: 'hi', requestId: 'r1' });
    const again = await appendMessage(db.pool, { conversationId: conv.id, role: 'user', content: 'hi', requestId: 'r1' });
    expect(again.id).toBe(first.id);
    await expect(
      appendMessage(db.pool, { conversationId: conv.id, role: 'user', content: 'other', requestId: 'r1' }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    const concurrent = await Promise.all(
      Array.from({ length: 8 }, () =>
        appendMessage(db.pool, { conversationId: conv.id, role: 'user', content: 'same', requestId: 'r2' }),
      ),
    );
    expect(new Set(concurrent.map((m) => m.id)).size).toBe(1);
    const page = await listMessages(db.pool, { conversationId: conv.id, limit: 50 });
    expect(page.items.map((m) => m.content)).toEqual(['hi', 'same']);
  });

  it('updates content and merges metadata; patches the newest card with a metadata field', async () => {
    const conv = await createConversation(db.pool, { userId });
    const card = await appendMessage(db.pool, {
      conversationId: conv.id,
      role: 'assistant',
      content: '',
      metadata: { type: 'tool', tool: 'check_health', tool_call_id: 'call_1', status: 'running' },
    });
    const older = await appendMessage(db.pool, { conversationId: conv.id, role: 'assistant', content: '', metadata: { type: 'approval', approval_id: 'a1', status: 'pending' } });
    const newer = await appendMessage(db.pool, { conversationId: conv.id, role: 'assistant', content: '', metadata: { type: 'approval', approval_id: 'a1', status: 'pending' } });
    const patched = await patchNewestByMetadata(db.pool, { conversationId: conv.id, key: 'approval_id', value: 'a1', metadataPatch: { status: 'confirmed' } });
    expect(patched?.id).toBe(newer.id);
    const after = await listMessages(db.pool, { conversationId: conv.id, limit: 50 });
    expect(after.items.find((m) => m.id === older.id)?.metadata.status).toBe('pending');
    expect(after.items.find((m) => m.id === newer.id)?.metadata).toEqual({ type: 'approval', approval_id: 'a1', status: 'confirmed' });
    expect(await patchNewestByMetadata(db.pool, { conversationId: conv.id, key: 'approval_id', value: 'nope', metadataPatch: { status: 'x' } })).toBeNull();
    const updated = await updateMessage(db.pool, { id: card.id, metadataPatch: { status: 'done', output: { ok: true } } });
    expect(updated?.metadata).toEqual({ type: 'tool', tool: 'check_health', tool_call_id: 'call_1', status: 'done', output: { ok: true } });
    const text = await updateMessage(db.pool, { id: card.id, content: 'zebra answer' });
    expect(text?.content).toBe('zebra answer');
    expect(text?.metadata.status).toBe('done');
    const search = await listConversations(db.pool, { userId, archived: false, query: 'zebra', limit: 5 });
    expect(search.items.map((c) => c.id)).toEqual([conv.id]);
    expect(await updateMessage(db.pool, { id: crypto.randomUUID(), content: 'x' })).toBeNull();
  });

  it('pages older messages with before, oldest first within a page', async () => {
    const conv = await createConversation(db.pool, { userId });
    for (let i = 0; i < 7; i++) await appendMessage(db.pool, { conversationId: conv.id, role: 'user', content: `m${i}` });
    const p1 = await listMessages(db.pool, { conversationId: conv.id, limit: 3 });
    expect(p1.items.map((m) => m.content)).toEqual(['m4', 'm5', 'm6']);
    const p2 = await listMessages(db.pool, { conversationId: conv.id, limit: 3, beforeSeq: p1.nextBeforeSeq });
    expect(p2.items.map((m) => m.content)).toEqual(['m1', 'm2', 'm3']);
    const p3 = await listMessages(db.pool, { conversationId: conv.id, limit: 3, beforeSeq: p2.nextBeforeSeq });
    expect(p3.items.map((m) => m.content)).toEqual(['m0']);
    expect(p3.nextBeforeSeq).toBeNull();
  });
});

describe('leases', () => {
  it('is taken by one holder at a time, renewed, moved between states and released', async () => {
    const conv = await createConversation(db.pool, { userId });
    const conversationId = conv.id;
    const racers = await Promise.all(
      ['a', 'b', 'c', 'd'].map((holder) => tryTakeLease(db.pool, { conversationId, holder, state: 'streaming', ttlS: 30 })),
    );
    expect(racers.filter(Boolean)).toHaveLength(1);
    const lease = await getLease(db.pool, conversationId);
    const holder = lease!.holder;
    const other = holder === 'a' ? 'b' : 'a';
    expect(lease).toMatchObject({ state: 'streaming', held: true });
    expect(await tryTakeLease(db.pool, { conversationId, holder, state: 'streaming', ttlS: 30 })).toBe(true);
    expect(await renewLease(db.pool, { conversationId, holder, ttlS: 60 })).toBe(true);
    expect(await renewLease(db.pool, { conversationId, holder: other, ttlS: 60 })).toBe(false);
    expect(await setLeaseState(db.pool, { conversationId, holder, state: 'awaiting_confirmation', ttlS: 300 })).toBe(true);
    expect((await getLease(db.pool, conversationId))?.state).toBe('awaiting_confirmation');
    expect(await releaseLease(db.pool, { conversationId, holder: other })).toBe(false);
    expect(await releaseLease(db.pool, { conversationId, holder })).toBe(true);
    expect(await getLease(db.pool, conversationId)).toBeNull();
  });

  it('can be taken over once expired', async () => {
    const conv = await createConversation(db.pool, { userId });
    const conversationId = conv.id;
    expect(await tryTakeLease(db.pool, { conversationId, holder: 'old', state: 'streaming', ttlS: 0.05 })).toBe(true);
    await new Promise((r) => setTimeout(r, 120));
    const stale = await getLease(db.pool, conversationId);
    expect(stale?.held).toBe(false);
    expect(isLeaseHeld({ lease: stale, now: new Date() })).toBe(false);
    expect(await tryTakeLease(db.pool, { conversationId, holder: 'new', state: 'streaming', ttlS: 30 })).toBe(true);
    expect(await renewLease(db.pool, { conversationId, holder: 'old', ttlS: 30 })).toBe(false);
  });

  it('a pause is taken over only when asked (a new turn), never a streaming run', async () => {
    const { id: conversationId } = await createConversation(db.pool, { userId });
    expect(await tryTakeLease(db.pool, { conversationId, holder: 'paused', state: 'streaming', ttlS: 30 })).toBe(true);
    expect(await tryTakeLease(db.pool, { conversationId, holder: 'next', state: 'streaming', ttlS: 30, takeOverPause: true })).toBe(false);
    await setLeaseState(db.pool, { conversationId, holder: 'paused', state: 'awaiting_confirmation', ttlS: 300 });
    expect(await tryTakeLease(db.pool, { conversationId, holder: 'other', state: 'streaming', ttlS: 30 })).toBe(false);
    const racers = await Promise.all(['n1', 'n2', 'n3'].map((holder) => tryTakeLease(db.pool, { conversationId, holder, state: 'streaming', ttlS: 30, takeOverPause: true })));
    expect(racers.filter(Boolean)).toHaveLength(1);
    expect(await getLease(db.pool, conversationId)).toMatchObject({ state: 'streaming', held: true });
  });
});

describe('leases of a process that is gone (issue 23 item 7)', () => {
  /** A process's pulse: a dedicated connection registered as `owner`; `die()` ends its backend as a SIGKILL would. */
  async function registered(owner: string) {
    const pulse = await db.pool.connect();
    pulse.on('error', () => {});
    await registerProcess(pulse, { owner, pid: 1, epoch: 0 });
    const { rows } = await pulse.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return {
      async die() {
        await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        pulse.release(true);
        // pg_terminate_backend signals; the backend leaves pg_stat_activity a moment later.
        while ((await db.pool.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [rows[0].pid])).rowCount) await new Promise((r) => setTimeout(r, 10));
      },
    };
  }

  it('a streaming lease is free the moment its owner\'s backend is gone, well before its TTL; a live owner keeps it', async () => {
    const { id: conversationId } = await createConversation(db.pool, { userId });
    const owner = `proc-${randomUUID()}`;
    const pulse = await registered(owner);
    expect(await tryTakeLease(db.pool, { conversationId, holder: 'run-a', state: 'streaming', ttlS: 300, owner })).toBe(true);
    expect(await tryTakeLease(db.pool, { conversationId, holder: 'run-b', state: 'streaming', ttlS: 30 })).toBe(false);
    await pulse.die();
    expect(await tryTakeLease(db.pool, { conversationId, holder: 'run-b', state: 'streaming', ttlS: 30 })).toBe(true);
    expect(await getLease(db.pool, conversationId)).toMatchObject({ holder: 'run-b', held: true });
  });

  it('a pause outlives its process (the approval is answered after a restart), and an unregistered owner falls back to the TTL', async () => {
    const { id: paused } = await createConversation(db.pool, { userId });
    const owner = `proc-${randomUUID()}`;
    const pulse = await registered(owner);
    await tryTakeLease(db.pool, { conversationId: paused, holder: 'run-p', state: 'streaming', ttlS: 30, owner });
    await setLeaseState(db.pool, { conversationId: paused, holder: 'run-p', state: 'awaiting_confirmation', ttlS: 300 });
    await pulse.die();
    expect(await tryTakeLease(db.pool, { conversationId: paused, holder: 'other', state: 'streaming', ttlS: 30 })).toBe(false);

    const { id: unregistered } = await createConversation(db.pool, { userId });
    await tryTakeLease(db.pool, { conversationId: unregistered, holder: 'run-u', state: 'streaming', ttlS: 300, owner: `never-registered-${randomUUID()}` });
    expect(await tryTakeLease(db.pool, { conversationId: unregistered, holder: 'other', state: 'streaming', ttlS: 30 })).toBe(false);
  });

  it('a running run of a gone owner is an orphan at once; a live owner\'s is not', async () => {
    const [alive, gone] = [`proc-${randomUUID()}`, `proc-${randomUUID()}`];
    const [alivePulse, gonePulse] = [await registered(alive), await registered(gone)];
    const runOf = async (owner: string) => {
      const runId = randomUUID();
      await openNewConversationTurn(db.pool, { userId, text: 'hi', runId, requestId: `req-${runId}`, requestHash: 'h', owner, leaseTtlS: 300 });
      return runId;
    };
    const [aliveRun, goneRun] = [await runOf(alive), await runOf(gone)];
    await gonePulse.die();
    const orphans = (await listOrphanedRuns(db.pool)).map((r) => r.id);
    expect(orphans).toContain(goneRun);
    expect(orphans).not.toContain(aliveRun);
    await alivePulse.die();
  });
});

describe('opening a turn on a new conversation (one statement)', () => {
  it('creates the conversation (titled from the text), its lease held by the run, and the running run; a second run with the same request id is none', async () => {
    const runId = randomUUID();
    const input = { userId, text: 'Deploy checkout-api 2.4.1 to staging please', runId, requestId: `req-${runId}`, requestHash: 'h', owner: 'test', leaseTtlS: 30 };
    const opened = await openNewConversationTurn(db.pool, input);
    expect(await getConversationForUser(db.pool, { id: opened.conversationId, userId })).toMatchObject({ title: expect.stringContaining('Deploy checkout-api') });
    expect(await getLease(db.pool, opened.conversationId)).toMatchObject({ holder: runId, state: 'streaming', held: true });
    expect(opened.run).toMatchObject({ id: runId, conversationId: opened.conversationId, status: 'running', requestId: input.requestId });
    expect(opened.run!.leaseExpiresAt).toBeInstanceOf(Date);
    expect(await getRun(db.pool, runId)).toMatchObject({ id: runId });

    const retry = await openNewConversationTurn(db.pool, { ...input, runId: randomUUID() });
    expect(retry.run).toBeNull(); // the caller releases the lease and follows the first run
    expect(retry.conversationId).not.toBe(opened.conversationId);
  });
});

describe('opening a turn on an existing conversation (one statement)', () => {
  const open = (conversationId: string, over: { userId?: string; requestId?: string } = {}) => {
    const runId = randomUUID();
    return openExistingConversationTurn(db.pool, { userId: over.userId ?? userId, conversationId, runId, requestId: over.requestId ?? `req-${runId}`, requestHash: 'h', owner: 'test', leaseTtlS: 30 });
  };

  it("takes the lease and writes the run; another run meanwhile is BUSY and writes nothing; another user's conversation is not found", async () => {
    const { id: conversationId } = await createConversation(db.pool, { userId, text: 'existing' });
    const first = await open(conversationId);
    expect(first).toMatchObject({ found: true, leased: true, run: { conversationId, status: 'running' } });
    expect(await getLease(db.pool, conversationId)).toMatchObject({ holder: first.run!.id, state: 'streaming', held: true });

    const busy = await open(conversationId);
    expect(busy).toEqual({ found: true, leased: false, run: null, branchAt: { active: 0, thread: 0, forked: false } });
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM runs WHERE conversation_id = $1', [conversationId]);
    expect(rows[0].n).toBe(1);

    for (const [id, who] of [[conversationId, otherId], [randomUUID(), userId], ['not-a-uuid', userId]]) {
      expect(await open(id, { userId: who })).toEqual({ found: false, leased: false, run: null });
    }
    expect(await getLease(db.pool, conversationId)).toMatchObject({ holder: first.run!.id });
  });

  it("takes over a paused run's lease; a request id the user already used takes the lease but writes no run", async () => {
    const { id: conversationId } = await createConversation(db.pool, { userId, text: 'paused' });
    const paused = await open(conversationId);
    await setLeaseState(db.pool, { conversationId, holder: paused.run!.id, state: 'awaiting_confirmation', ttlS: 300 });
    const resumed = await open(conversationId);
    expect(resumed).toMatchObject({ found: true, leased: true, run: { conversationId } });
    expect(await getLease(db.pool, conversationId)).toMatchObject({ holder: resumed.run!.id, state: 'streaming' });

    await releaseLease(db.pool, { conversationId, holder: resumed.run!.id });
    const retry = await open(conversationId, { requestId: resumed.run!.requestId });
    expect(retry).toEqual({ found: true, leased: true, run: null, branchAt: { active: 0, thread: 0, forked: false } }); // the caller releases the lease and follows the first run
  });
});

describe('housekeeping', () => {
  it('prunes expired revocations and browser sessions, stale login counters and old idempotency results only', async () => {
    const { pruneExpired } = await import('../../server/api/housekeeping.ts');
    await db.pool.query(`INSERT INTO revoked_tokens (jti, expires_at) VALUES ('old', now() - interval '1 minute'), ('live', now() + interval '1 hour')`);
    await db.pool.query(`INSERT INTO login_attempts (key, failures, first_failure_at) VALUES ('stale', 3, now() - interval '2 days'), ('fresh', 3, now())`);
    await db.pool.query(
      `INSERT INTO idempotency_keys (user_id, key, operation, request_hash, status_code, response)
       VALUES ($1, 'old', 'x', 'h', 200, '{}'), ($1, 'new', 'x', 'h', 200, '{}')`,
      [userId],
    );
    await db.pool.query(`UPDATE idempotency_keys SET created_at = now() - interval '8 days' WHERE key = 'old'`);
    await db.pool.query(
      `INSERT INTO refresh_tokens (id, family_id, user_id, secret_hash, expires_at)
       VALUES ('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000001', $1, 'h', now() - interval '1 minute'),
              ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000002', $1, 'h', now() + interval '1 hour')`,
      [userId],
    );
    await pruneExpired(db.pool);
    const keys = async (sql: string) => (await db.pool.query(sql)).rows.map((r) => r.k).sort();
    expect(await keys('SELECT jti AS k FROM revoked_tokens')).toEqual(['live']);
    expect(await keys('SELECT key AS k FROM login_attempts')).toEqual(['fresh']);
    expect(await keys('SELECT key AS k FROM idempotency_keys')).toEqual(['new']);
    expect(await keys('SELECT id::text AS k FROM refresh_tokens')).toEqual(['00000000-0000-4000-8000-000000000002']);
  });
});
