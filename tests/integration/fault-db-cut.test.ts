/**
 * Issue 30 item 1: no fault of PostgreSQL kills the process. Eight `/chat` streams are in flight
 * when the database goes away under a real server process:
 * (a) `DATABASE_URL` through a TCP proxy that is cut (every connection, checked out or idle, dies);
 * (b) the embedded postmaster killed with SIGKILL (no `DATABASE_URL`, data under DATA_DIR).
 * Each time the process stays up, every stream ends with the retryable SERVICE_UNAVAILABLE, the
 * answers the users watched are written whole once PostgreSQL is back, and a new turn works.
 *
 * The fault lands in the window that used to end the process, on purpose rather than by chance:
 * the test holds the ledger's head table, so the streams that reach their last commit wait inside
 * their transaction, a client checked out of the pool with (before the fix) no 'error' listener,
 * and node died with "Unhandled 'error' event" (EPIPE, or "Connection terminated unexpectedly").
 * The other streams are still mid-answer: theirs end as partial answers.
 * Part of the fault suite (`npm run test:faults`): prints fault, outcome, data lost.
 */
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { APP_ROLE, connectionUrl, readCredentials, socketFits } from '../../server/db/embedded/layout.ts';
import { chat, collect, connectChat, login, type Turn } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { createFaultTable } from '../helpers/fault-table.ts';
import { clusterDirOf, postmasterPidOf, startEmbeddedMain, startMain, waitGone, type MainProcess } from '../helpers/main-process.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

const STREAMS = 8;
/** Streams waiting in their last commit at the fault; the rest are mid-answer. */
const IN_COMMIT = 4;
/** The offline model's help text: about 150 words, at 80 ms a word (about 12 s). */
const PROMPT = 'tell me about yourself and what you can help me with today in detail';
/** Between two streams' starts: they reach their last commit one after another. */
const STAGGER_MS = 400;
/** Characters every stream has shown before the ledger is held. */
const SHOWN = 40;
const ENV = { OFFLINE_MODEL_DELAY_MS: '80', CHAT_USER_CONCURRENCY: String(STREAMS), LOG_LEVEL: 'warn' };
/**
 * (a) keeps the database away longer than the runs' lease (LEASE_TTL_S): once it is back, recovery
 * would take the streams' runs for orphans, and their kept answers must still be the ones written.
 */
const LEASE_TTL_S = 5;
const OUTAGE_MS = 8_000;

const table = createFaultTable('db-cut');
const cleanups: Array<() => Promise<unknown>> = [];

afterAll(async () => {
  table.print();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await chmod(dir, 0o755);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `read` until it is truthy or `timeoutMs` passed; returns its last value. */
async function waitFor<T>(read: () => Promise<T>, timeoutMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value || Date.now() > deadline) return value;
    await sleep(250);
  }
}

/**
 * `STREAMS` turns, each in a new conversation, started `STAGGER_MS` apart; `shown` resolves once
 * every one has shown `SHOWN` characters of its answer (rejects when one ended first).
 */
async function streamsInFlight(url: string, token: string): Promise<{ shown: Promise<void>; turns: Promise<Turn[]> }> {
  const clients = await Promise.all(Array.from({ length: STREAMS }, () => connectChat(url, token)));
  const streaming = new Set<number>();
  let allShown!: () => void;
  const shown = new Promise<void>((resolve) => (allShown = resolve));
  const turns = Promise.all(
    clients.map(async (client, i) => {
      await sleep(i * STAGGER_MS);
      return collect(chat(client, PROMPT), (m) => {
        if (m.metadata.type !== 'stream_token' || m.content.length < SHOWN) return;
        streaming.add(i);
        if (streaming.size === STREAMS) allShown();
      });
    }),
  );
  const endedFirst = turns.then(() => {
    throw new Error(`only ${streaming.size} of ${STREAMS} streams were mid-answer at once`);
  });
  return { shown: Promise.race([shown, endedFirst]), turns };
}

/**
 * Holds the ledger's head table (EXCLUSIVE: reads go on, writes wait) on a connection of the
 * test's own: a stream that reaches its last commit waits inside its transaction.
 */
async function holdLedger(url: string): Promise<{ waiting(): Promise<number>; release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {}); // (b) kills its server too
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE conversation_event_heads IN EXCLUSIVE MODE');
  return {
    async waiting() {
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'conversation_event_heads'::regclass AND NOT granted",
      );
      return rows[0].n;
    },
    async release() {
      await client.query('ROLLBACK').catch(() => {});
      await client.end().catch(() => {});
    },
  };
}

/** The streams run; once all show their answer, the ledger is held until `IN_COMMIT` wait in it. */
async function streamsAtTheFault(url: string, databaseUrl: string): Promise<{ turns: Promise<Turn[]>; release(): Promise<void>; token: string }> {
  const token = await login(url, 'operator');
  const { shown, turns } = await streamsInFlight(url, token);
  await shown;
  const held = await holdLedger(databaseUrl);
  cleanups.push(() => held.release());
  expect(await waitFor(async () => (await held.waiting()) >= IN_COMMIT, 30_000)).toBe(true);
  return { turns, release: () => held.release(), token };
}

/** Every stream ended with the retryable SERVICE_UNAVAILABLE, after showing part of its answer. */
function expectUnavailable(turns: Turn[]): void {
  for (const turn of turns) {
    expect(turn.final?.metadata).toMatchObject({ type: 'error', code: 'SERVICE_UNAVAILABLE', retryable: true });
    expect(turn.final!.content.length).toBeGreaterThanOrEqual(SHOWN);
  }
}

/** How many streams were cut mid-answer (shorter than the whole answer, which the others showed). */
function partial(turns: Turn[]): number {
  const whole = Math.max(...turns.map((t) => t.final!.content.length));
  return turns.filter((t) => t.final!.content.length < whole).length;
}

/** The last assistant message of a conversation, as the history route serves it. */
async function lastAnswer(url: string, token: string, conversationId: string): Promise<string | undefined> {
  const res = await fetch(`${url}/api/assistant/history?conversation_id=${conversationId}`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) return undefined;
  const { items } = (await res.json()) as { items: Array<{ role: string; content: string }> };
  const last = items.at(-1);
  return last?.role === 'assistant' ? last.content : undefined;
}

/**
 * How many of the streams' answers are not stored as shown once the database is back (the data
 * lost), waiting up to `timeoutMs` for the kept writes.
 */
async function answersNotStored(url: string, token: string, turns: Turn[], timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let missing = turns;
  for (;;) {
    const stored = await Promise.all(missing.map((t) => lastAnswer(url, token, t.final!.metadata.conversation_id).catch(() => undefined)));
    missing = missing.filter((t, i) => stored[i] !== t.final!.content);
    if (missing.length === 0 || Date.now() > deadline) return missing.length;
    await sleep(500);
  }
}

/** A new conversation's turn completes (the offline model calls a tool: the database is written). */
async function newTurnWorks(url: string): Promise<void> {
  const token = await login(url, 'operator');
  const turn = await collect(chat(await connectChat(url, token), 'What is the health of payments-api?'));
  expect(turn.status).toBe('complete');
  expect(turn.types).toContain('tool_end');
  expect(turn.final?.metadata.type).not.toBe('error');
}

/** The process is still up a moment after the streams ended (a late 'error' would come then). */
async function expectUp(main: MainProcess): Promise<void> {
  await sleep(500);
  expect(main.child.exitCode, main.output()).toBeNull();
}

/** The embedded database's URL for its application role, from DATA_DIR's credentials. */
async function embeddedUrl(dataDir: string): Promise<string> {
  const credentials = (await readCredentials(join(dataDir, 'postgres')))!;
  const { clusterDir } = credentials;
  const port = Number((await readFile(join(clusterDir, 'pgdata', 'postmaster.pid'), 'utf8')).split('\n')[3]);
  return connectionUrl({ user: APP_ROLE, password: credentials.appPassword, database: 'airlock', clusterDir, port, socket: socketFits(clusterDir) });
}

describe('DB cut with streams in flight', () => {
  it('(a) DATABASE_URL through a TCP proxy that is cut: the process stays up, the streams end SERVICE_UNAVAILABLE, the answers are written when it is back', async () => {
    const db: TestDatabase = await createTestDatabase();
    cleanups.push(() => db.drop());
    const target = new URL(inject('databaseUrl'));
    const proxy: TcpProxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    cleanups.push(() => proxy.close());
    const main: MainProcess = await startMain(['--role', 'api,gateway'], {
      ...ENV,
      LEASE_TTL_S: String(LEASE_TTL_S),
      DATABASE_URL: proxy.urlFor(db.url),
      DATA_DIR: await tempDir('airlock-dbcut-'),
      SERVICE_CLIENT_SECRET: 'test-service-secret-0123456789',
    });
    cleanups.push(() => main.stop());

    const { turns, release, token } = await streamsAtTheFault(main.url, db.url);
    await proxy.refuse();
    await release(); // the cut transactions go on server-side, find no client, and roll back
    const ended = await turns;
    await expectUp(main);
    expectUnavailable(ended);
    await sleep(OUTAGE_MS);

    await proxy.restore();
    await newTurnWorks(main.url);
    const lost = await answersNotStored(main.url, token, ended, 45_000);
    expect(lost).toBe(0);
    const chars = ended.reduce((sum, t) => sum + t.final!.content.length, 0);
    table.record({
      fault: 'DB cut with streams in flight (TCP proxy)',
      outcome: `process up; ${STREAMS}/${STREAMS} streams SERVICE_UNAVAILABLE (${IN_COMMIT}+ in their last commit, ${partial(ended)} mid-answer); ${OUTAGE_MS / 1000} s away (lease ${LEASE_TTL_S} s); ${chars} chars written once back; a new turn completes`,
      lost,
    });
    expect(main.child.exitCode).toBeNull();
  }, 120_000);

  it('(b) kill -9 of the embedded postmaster: the process stays up, PostgreSQL is started again, and it answers again', async () => {
    const dir = await tempDir('airlock-dbkill-');
    const dataDir = join(dir, 'data');
    const main: MainProcess = await startEmbeddedMain(dataDir, ENV);
    cleanups.push(async () => {
      const postmaster = await postmasterPidOf(dataDir).catch(() => null);
      await main.stop(15_000);
      if (postmaster) await waitGone(postmaster, 15_000);
      const cluster = await clusterDirOf(dataDir).catch(() => null);
      if (cluster && !cluster.startsWith(dir)) await rm(cluster, { recursive: true, force: true });
    });

    const { turns, token } = await streamsAtTheFault(main.url, await embeddedUrl(dataDir));
    const first = await postmasterPidOf(dataDir);
    process.kill(first, 'SIGKILL');
    const killedAt = Date.now();
    const ended = await turns;
    await expectUp(main);
    expectUnavailable(ended);

    const again = await waitFor(() => login(main.url, 'operator'), 60_000);
    expect(again, main.output()).toMatch(/^ey/);
    const backAfter = Date.now() - killedAt;
    expect(await postmasterPidOf(dataDir)).not.toBe(first);
    // The supervisor's report may reach our pipe a moment after the login it made possible.
    await expect.poll(() => main.output(), { timeout: 10_000 }).toMatch(/the embedded database is running again \(pid \d+\)/);
    await newTurnWorks(main.url);
    const lost = await answersNotStored(main.url, token, ended, 60_000);
    expect(lost).toBe(0);
    table.record({
      fault: 'DB cut with streams in flight (kill -9 embedded postmaster)',
      outcome: `process up; ${STREAMS}/${STREAMS} streams SERVICE_UNAVAILABLE (${IN_COMMIT}+ in their last commit, ${partial(ended)} mid-answer); restarted, logins after ${backAfter} ms; answers written`,
      lost,
    });
    expect(main.child.exitCode).toBeNull();
  }, 180_000);
});
