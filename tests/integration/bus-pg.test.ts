/**
 * The PostgreSQL session bus: the SessionBus contract with two buses on one schema (two
 * replicas), then what only it has: batching (one NOTIFY per frame batch, payloads under the
 * NOTIFY limit), spilled batches, and a dead replica's events ended by the sweep.
 */
import { spawn } from 'node:child_process';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgSessionBus } from '../../server/gradio/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { eventually, runBusContract } from '../helpers/bus-contract.ts';

const orphanMessage = (eventId: string) => ({ eventId, frame: `orphan:${eventId}`, terminal: true });
const owner = { owner: 'alice', sessionHash: 'client-session' };

runBusContract('postgres', async () => {
  const db = await createTestDatabase();
  const here = await PgSessionBus.start({ pool: db.pool, orphanMessage });
  const there = await PgSessionBus.start({ pool: db.pool, orphanMessage });
  return {
    here,
    there,
    replicas: true,
    async close() {
      await here.close();
      await there.close();
      await db.drop();
    },
  };
});

describe('PostgreSQL bus specifics', () => {
  let db: TestDatabase;
  let a: PgSessionBus;
  let b: PgSessionBus;
  beforeAll(async () => {
    db = await createTestDatabase();
    a = await PgSessionBus.start({ pool: db.pool, orphanMessage, sweepMs: 60_000 });
    b = await PgSessionBus.start({ pool: db.pool, orphanMessage, sweepMs: 60_000 });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await db.drop();
  });

  it('attach waits for its own notifications to catch up: a late listener still finds a session completed before its GET', async () => {
    // Without the barrier in attach this session reads as unknown on the late replica.
    const c = await PgSessionBus.start({ pool: lateListener(db.pool), orphanMessage, sweepMs: 60_000 });
    try {
      await a.addEvent('late', 'late-e', owner);
      a.publish('late', { eventId: 'late-e', frame: 'x', terminal: false });
      a.publish('late', { eventId: 'late-e', frame: 'end', terminal: true });
      await a.flush();
      const got: string[] = [];
      const attachment = await c.attach('late', (m) => got.push(m.frame));
      expect(attachment).not.toBeNull();
      await eventually(() => expect(got).toEqual(['x', 'end']));
      attachment!.detach();
    } finally {
      await c.close();
    }
  });

  it('a forget that overtakes the join on its way in drops the session here as on every other replica', async () => {
    const c = await PgSessionBus.start({ pool: lateListener(db.pool), orphanMessage, sweepMs: 60_000 });
    try {
      await a.addEvent('overtaken', 'overtaken-e', owner); // c applies this join 200 ms from now
      c.forget('overtaken'); // c does not know the session yet; its forget is ordered after the join
      await c.flush();
      await a.addEvent('marker', 'marker-e', owner); // ordered after the forget: once seen, all before it was applied
      await eventually(() => expect([b.pending('marker'), c.pending('marker')]).toEqual([1, 1]));
      expect([a.pending('overtaken'), b.pending('overtaken'), c.pending('overtaken')]).toEqual([0, 0, 0]);
    } finally {
      await c.close();
    }
  });

  it('sends frames published in one tick as one NOTIFY, and large ones through the table, in order', async () => {
    await a.addEvent('batch', 'e', owner);
    const got: string[] = [];
    await b.attach('batch', (m) => got.push(m.frame));
    await a.flush();
    const before = { ...a.stats };
    const frames = Array.from({ length: 20 }, (_, i) => `frame-${i}`);
    for (const f of frames) a.publish('batch', { eventId: 'e', frame: f, terminal: false });
    await a.flush();
    expect(a.stats.notifies - before.notifies).toBe(1);
    const big = `big-${'é'.repeat(20_000)}`;
    a.publish('batch', { eventId: 'e', frame: big, terminal: false });
    await a.flush();
    a.publish('batch', { eventId: 'e', frame: 'after', terminal: true });
    await eventually(() => expect(got).toEqual([...frames, big, 'after']));
    expect(a.stats.spilled - before.spilled).toBe(1);
  });

  it('a SIGKILLed replica: another one ends its events for the waiting stream, once; its mailboxes are gone', async () => {
    await a.addEvent('held', 'e-held', owner); // runs on a live replica; its stream is on the dying one
    const child = spawn(process.execPath, ['--import', 'tsx', 'tests/helpers/bus-replica-process.ts'], {
      env: { ...process.env, BUS_DATABASE_URL: db.url, BUS_SESSION: 'dying', BUS_EVENT: 'e-dead', BUS_ATTACH: 'held', BUS_MAILBOX: 'dying-box' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (c: Buffer) => c.toString().includes('ready') && resolve());
      child.once('exit', (code) => reject(new Error(`replica exited ${code}`)));
    });
    const got: string[] = [];
    await eventually(async () => expect(await b.attach('dying', (m, pending) => got.push(`${m.frame}/${pending}`))).not.toBeNull());
    expect(await a.sweep()).toEqual([]); // alive: its events are its own
    expect(await b.postMailbox('dying-box', 'alice', '{}')).toBe('sent');
    await eventually(() => expect(b.attached('held')).toBe(true));
    child.kill('SIGKILL');
    const started = Date.now();
    await eventually(async () => expect(await a.sweep()).toEqual(['e-dead']));
    await eventually(() => expect(got).toEqual(['orphan:e-dead/0']));
    expect(Date.now() - started).toBeLessThan(2_000); // the connection drops with the process
    expect(await b.sweep()).toEqual([]); // once across replicas
    // Its MCP streams died with it: posting to them is a 404 (unknown), not mail into the void.
    expect(await b.postMailbox('dying-box', 'alice', '{}')).toBe('unknown');
    // The stream it served died with it: no replica keeps buffering that session's frames.
    await eventually(() => expect([a.attached('held'), b.attached('held'), a.pending('held'), b.pending('held')]).toEqual([false, false, 0, 0]));
    a.publish('held', { eventId: 'e-held', frame: 'end', terminal: true });
    await a.flush();
  });
});

/** The pool, except that its first client (the bus's LISTEN connection) hears every notification 200 ms late: a busy replica. */
function lateListener(pool: pg.Pool): pg.Pool {
  let first = true;
  return {
    query: (...args: unknown[]) => (pool.query as (...a: unknown[]) => unknown)(...args),
    connect: async () => {
      const client = await pool.connect();
      if (first) {
        first = false;
        const on = client.on.bind(client);
        client.on = ((event: string, listener: (...a: unknown[]) => void) =>
          on(event as 'notification', event === 'notification' ? (n: unknown) => setTimeout(() => listener(n), 200) : listener)) as typeof client.on;
      }
      return client;
    },
  } as unknown as pg.Pool;
}
