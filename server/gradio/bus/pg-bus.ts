/**
 * The session bus shared by several replicas through PostgreSQL alone (no Redis, no sticky
 * sessions). Every replica LISTENs on one channel and applies the bus operations in the order
 * PostgreSQL delivers them, which is the same everywhere (commit order), so each replica mirrors
 * every session (mirror.ts) and any of them can serve a session's `/queue/data` stream.
 *
 * - Frames travel in NOTIFY payloads, batched: the frames published in one tick (and all those
 *   published while the previous batch was in flight) go out as ONE notification of at most
 *   `INLINE_MAX` bytes. A batch larger than that (a completion carrying a long history) is written
 *   to `gradio_bus_frames` and the notification carries only its id. Partial frames are never
 *   written to a table.
 * - Events are rows (`gradio_bus_events`): one insert per join, one delete at its completion. They
 *   say which replica runs an event (cancel fans out to it on its own channel) and let a replica
 *   that started later adopt a session it never saw joined.
 * - A replica is alive while its LISTEN connection is (`gradio_bus_replicas` holds its backend pid):
 *   a SIGKILLed replica's connection drops at once, and the next sweep (every `sweepMs`) ends its
 *   events with `orphanMessage` so no client waits forever.
 *
 * - Curl call-API events are rows too (`gradio_bus_calls`, one per call): the POST and its GET may
 *   land on different replicas; the GET's DELETE ... RETURNING makes it the one reader.
 *
 * - Mailboxes (`gradio_bus_mailboxes`, one row per open MCP `/sse` stream) say which replica holds
 *   a stream; a message posted on any replica goes to that one on its own channel, every message
 *   through NOTIFY (even to itself) so they arrive in the order they were posted.
 *
 * Needs the tables of migrations 120, 122 and 123 (server/db/migrations/). Takes a pg Pool;
 * knows nothing of what the frames mean.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { releaseOnce } from '../../db/pool.ts';
import { mayCancel, type CancelClaim, type EventOwnership } from '../ownership.ts';
import { batchOps, INLINE_MAX, orphanCompletion } from './frames.ts';
import { BusMirror, type BusOp } from './mirror.ts';
import type { Attachment, BusMessage, CallRecord, CancelOutcome, LocalCancel, Mailbox, SessionBus, SessionSink } from './types.ts';

export { batchOps, INLINE_MAX, orphanCompletion } from './frames.ts';

const BUS_CHANNEL = 'airlock_gradio_bus:';
const CANCEL_CHANNEL = 'airlock_gradio_cancel:';
const MAIL_CHANNEL = 'airlock_gradio_mail:';
/** A payload starting with this names a spilled batch by id. */
const REF = '#';

/**
 * A connection this replica keeps checked out, with the release that hands it back once: its
 * 'error' (possibly emitted twice), a failed statement and close() may all try.
 */
interface Held {
  client: pg.PoolClient;
  release: ReturnType<typeof releaseOnce>;
}

export interface PgBusOptions {
  pool: pg.Pool;
  /** The terminal message ending an event whose replica died (default: an error completion asking to retry). */
  orphanMessage?: (eventId: string) => BusMessage;
  /** How often dead replicas are looked for (default 2 s). */
  sweepMs?: number;
  /** This replica's id (default random). */
  replica?: string;
  log?: { warn(obj: object, msg?: string): void };
}

/** What the bus sent, for the benchmark and tests. */
export interface PgBusStats {
  notifies: number;
  spilled: number;
  frames: number;
}

export class PgSessionBus implements SessionBus {
  readonly replica: string;
  readonly stats: PgBusStats = { notifies: 0, spilled: 0, frames: 0 };
  readonly #pool: pg.Pool;
  readonly #options: PgBusOptions;
  readonly #mirror = new BusMirror();
  #outbox: BusOp[] = [];
  #finished: string[] = [];
  #inFlight = false;
  #scheduled = false;
  #idle: Array<() => void> = [];
  /** Bus operations in arrival order (a spilled batch is read before anything after it). */
  readonly #inbound = new OrderedInbox((payload) => this.#unspill(payload), (json) => this.#apply(JSON.parse(json) as BusOp[]), (error) => this.#options.log?.warn({ err: error }, 'bus message failed'));
  #listener: Held | null = null;
  #publishing: Promise<Held> | null = null;
  #schema = '';
  #cancel: LocalCancel = () => {};
  #forgotten: (sessionHash: string) => void = () => {};
  #tokens = 0;
  /** Mailboxes open on this replica. */
  readonly #mailboxes = new Map<string, (payload: string) => void>();
  /** Mail payloads in arrival order (a spilled one is read before anything after it). */
  readonly #mail = new OrderedInbox((payload) => this.#unspill(payload), (json) => this.#deliver(json), (error) => this.#options.log?.warn({ err: error }, 'bus mail failed'));
  /** Barriers sent by this replica, resolved when their own notification comes back. */
  readonly #barriers = new Map<string, () => void>();
  #sweep: NodeJS.Timeout | null = null;
  #closed = false;

  private constructor(options: PgBusOptions) {
    this.#options = options;
    this.#pool = options.pool;
    this.replica = options.replica ?? randomUUID();
  }

  /** Opens the LISTEN connection, registers this replica and starts the sweep. */
  static async start(options: PgBusOptions): Promise<PgSessionBus> {
    const bus = new PgSessionBus(options);
    await bus.#listen();
    bus.#sweep = setInterval(() => void bus.sweep().catch((error) => bus.#options.log?.warn({ err: error }, 'bus sweep failed')), options.sweepMs ?? 2_000);
    bus.#sweep.unref();
    return bus;
  }

  async addEvent(s: string, e: string, ownership: EventOwnership): Promise<void> {
    await this.#pool.query(
      'INSERT INTO gradio_bus_events (event_id, session_hash, owner_key, client_session, replica) VALUES ($1, $2, $3, $4, $5)',
      [e, s, ownership.owner, ownership.sessionHash, this.replica],
    );
    this.#send({ o: 'e', s, e });
    await this.flush();
  }

  publish(s: string, message: BusMessage): void {
    if (message.terminal && message.eventId) this.#finished.push(message.eventId);
    this.#send({ o: 'm', s, e: message.eventId, f: message.frame, t: message.terminal ? 1 : 0 });
  }

  async attach(s: string, sink: SessionSink, onReplaced?: () => void): Promise<Attachment | null> {
    if (!this.#mirror.has(s)) {
      // Its join's notification may still be on its way, or this replica started after the join.
      const { rows } = await this.#pool.query<{ event_id: string }>('SELECT event_id FROM gradio_bus_events WHERE session_hash = $1', [s]);
      // Its events may all have completed already, their notifications not yet applied here: wait
      // until this replica has applied everything committed so far, then look again.
      if (rows.length === 0 && !this.#mirror.has(s)) await this.#barrier();
      if (!this.#mirror.has(s)) {
        if (rows.length === 0) return null;
        this.#mirror.adopt(s, rows.map((r) => r.event_id));
      }
    }
    const k = `${this.replica}:${++this.#tokens}`;
    if (!this.#mirror.attachHere(s, k, sink, onReplaced)) return null;
    this.#send({ o: 'a', s, k });
    return {
      detach: () => {
        if (this.#closed) return;
        this.#mirror.detachHere(s, k);
        this.#send({ o: 'd', s, k });
      },
    };
  }

  pending(s: string): number {
    return this.#mirror.pending(s);
  }

  attached(s: string): boolean {
    return this.#mirror.attached(s);
  }

  forget(s: string): void {
    this.#mirror.apply({ o: 'x', s });
    this.#send({ o: 'x', s, by: this.replica });
  }

  size(): number {
    return this.#mirror.size;
  }

  async putCall(eventId: string, call: CallRecord, ttlMs: number): Promise<void> {
    await this.#pool.query(
      `INSERT INTO gradio_bus_calls (event_id, api_name, session_hash, owner_key, expires_at)
       VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5::double precision / 1000))`,
      [eventId, call.apiName, call.sessionHash, call.owner, ttlMs],
    );
  }

  async takeCall(eventId: string, apiName: string, owner: string | null): Promise<string | null> {
    const { rows } = await this.#pool.query<{ session_hash: string }>(
      `DELETE FROM gradio_bus_calls
       WHERE event_id = $1 AND api_name = $2 AND owner_key IS NOT DISTINCT FROM $3 AND expires_at > now()
       RETURNING session_hash`,
      [eventId, apiName, owner],
    );
    return rows[0]?.session_hash ?? null;
  }

  async openMailbox(key: string, owner: string | null, deliver: (payload: string) => void): Promise<Mailbox> {
    await this.#pool.query('INSERT INTO gradio_bus_mailboxes (key, owner_key, replica) VALUES ($1, $2, $3)', [key, owner, this.replica]);
    this.#mailboxes.set(key, deliver);
    return {
      close: async () => {
        if (this.#mailboxes.get(key) !== deliver) return;
        this.#mailboxes.delete(key);
        await this.#pool.query('DELETE FROM gradio_bus_mailboxes WHERE key = $1 AND replica = $2', [key, this.replica]).catch(() => {});
      },
    };
  }

  async postMailbox(key: string, owner: string | null, payload: string): Promise<'sent' | 'refused' | 'unknown'> {
    const { rows } = await this.#pool.query<{ owner_key: string | null; replica: string }>('SELECT owner_key, replica FROM gradio_bus_mailboxes WHERE key = $1', [key]);
    if (rows.length === 0) return 'unknown';
    if (rows[0].owner_key !== owner) return 'refused';
    const mail = JSON.stringify({ k: key, r: rows[0].replica, p: payload });
    if (Buffer.byteLength(mail) <= INLINE_MAX) await this.#pool.query('SELECT pg_notify($1, $2)', [MAIL_CHANNEL + this.#schema, mail]);
    else {
      // Too large for a notification: the row carries it, the notification its id (read once, swept later).
      await this.#pool.query(
        `WITH spilled AS (INSERT INTO gradio_bus_frames (body) VALUES ($2) RETURNING id) SELECT pg_notify($1, '${REF}' || spilled.id) FROM spilled`,
        [MAIL_CHANNEL + this.#schema, mail],
      );
    }
    return 'sent';
  }

  async cancelRemote(eventId: string, claim: CancelClaim): Promise<CancelOutcome> {
    const { rows } = await this.#pool.query<{ owner_key: string | null; client_session: string; replica: string }>(
      'SELECT owner_key, client_session, replica FROM gradio_bus_events WHERE event_id = $1',
      [eventId],
    );
    if (rows.length === 0) return 'unknown';
    if (!mayCancel({ owner: rows[0].owner_key, sessionHash: rows[0].client_session }, claim)) return 'refused';
    await this.#pool.query('SELECT pg_notify($1, $2)', [CANCEL_CHANNEL + this.#schema, JSON.stringify({ e: eventId, r: rows[0].replica })]);
    return 'cancelled';
  }

  onCancel(handler: LocalCancel): void {
    this.#cancel = handler;
  }

  onForgotten(handler: (sessionHash: string) => void): void {
    this.#forgotten = handler;
  }

  flush(): Promise<void> {
    if (!this.#inFlight && !this.#scheduled && this.#outbox.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /**
   * Ends the events of dead replicas (their LISTEN connection is gone) with `orphanMessage`, and
   * drops spilled batches every replica has read. Safe on several replicas at once: the DELETE
   * is the claim. Returns the events it ended.
   */
  async sweep(): Promise<string[]> {
    // Without its own LISTEN connection this replica may be the one cut off: judge nobody.
    if (!this.#listener) return [];
    const { rows } = await this.#pool.query<{ event_id: string | null; session_hash: string | null; dead: string | null }>(
      `WITH dead AS (
         SELECT replica FROM gradio_bus_replicas r
         -- backend_start tells a reused pid apart; another role's sessions show it as NULL.
         WHERE r.replica <> $1 AND NOT EXISTS (
           SELECT 1 FROM pg_stat_activity a WHERE a.pid = r.backend_pid AND (a.backend_start IS NULL OR a.backend_start = r.backend_start))
       ), gone AS (
         DELETE FROM gradio_bus_events e USING dead WHERE e.replica = dead.replica RETURNING e.event_id, e.session_hash
       ), buried AS (
         DELETE FROM gradio_bus_replicas r USING dead WHERE r.replica = dead.replica RETURNING r.replica
       ), old AS (
         DELETE FROM gradio_bus_frames WHERE created_at < now() - interval '10 minutes'
       ), unread AS (
         DELETE FROM gradio_bus_calls WHERE expires_at <= now()
       ), boxes AS (
         DELETE FROM gradio_bus_mailboxes m USING dead WHERE m.replica = dead.replica
       )
       SELECT event_id, session_hash, NULL AS dead FROM gone
       UNION ALL SELECT NULL, NULL, replica FROM buried`,
      [this.replica],
    );
    const orphan = this.#options.orphanMessage ?? ((eventId: string) => orphanCompletion(eventId));
    for (const row of rows.filter((r) => r.event_id !== null)) this.publish(row.session_hash!, orphan(row.event_id!));
    // Streams the dead replica served are gone with it: every replica forgets those sessions.
    for (const replica of new Set(rows.filter((r) => r.dead !== null).map((r) => r.dead!))) this.#send({ o: 'r', r: replica });
    await this.flush();
    return rows.filter((r) => r.event_id !== null).map((r) => r.event_id!);
  }

  /**
   * Resolves once this replica has applied every notification committed before the call:
   * PostgreSQL delivers notifications in commit order, so its own marker coming back proves it.
   * Bounded: a lost LISTEN connection must not hang a request.
   */
  #barrier(timeoutMs = 2_000): Promise<void> {
    const k = `${this.replica}:${++this.#tokens}`;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#barriers.set(k, () => {
        this.#barriers.delete(k);
        done();
      });
      this.#send({ o: 'b', k });
    }).finally(() => this.#barriers.delete(k));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.flush();
    this.#closed = true;
    if (this.#sweep) clearInterval(this.#sweep);
    await this.#pool.query('DELETE FROM gradio_bus_replicas WHERE replica = $1', [this.replica]).catch(() => {});
    this.#listener?.release(true);
    this.#listener = null;
    const publishing = await this.#publishing?.catch(() => null);
    this.#publishing = null;
    publishing?.release();
  }

  #send(op: BusOp): void {
    if (this.#closed) return;
    this.#outbox.push(op);
    if (this.#scheduled || this.#inFlight) return;
    this.#scheduled = true;
    // Everything published in this tick goes out together.
    queueMicrotask(() => {
      this.#scheduled = false;
      void this.#pump();
    });
  }

  async #pump(): Promise<void> {
    if (this.#inFlight) return;
    this.#inFlight = true;
    while (this.#outbox.length > 0) {
      const ops = this.#outbox;
      const finished = this.#finished;
      this.#outbox = [];
      this.#finished = [];
      try {
        await this.#notify(batchOps(ops), finished);
        this.stats.frames += ops.filter((o) => o.o === 'm').length;
      } catch (error) {
        // The connection may be the problem: the next batch opens another.
        const broken = this.#publishing;
        this.#publishing = null;
        void broken?.then((held) => held.release(true)).catch(() => {});
        this.#options.log?.warn({ err: error, dropped: ops.length }, 'bus publish failed');
      }
    }
    this.#inFlight = false;
    const idle = this.#idle;
    this.#idle = [];
    idle.forEach((resolve) => resolve());
  }

  /**
   * One statement per batch on the replica's own publishing connection (no pool checkout on the
   * token path, prepared once): notify (inline, or spilled to a row), and delete the events that
   * just ended.
   */
  async #notify(batches: string[], finished: string[]): Promise<void> {
    const channel = BUS_CHANNEL + this.#schema;
    const { client } = await this.#publisher();
    for (let i = 0; i < batches.length; i++) {
      const ended = i === batches.length - 1 ? finished : [];
      if (Buffer.byteLength(batches[i]) > INLINE_MAX) {
        await client.query({
          name: 'airlock_bus_spill',
          text: `WITH spilled AS (INSERT INTO gradio_bus_frames (body) VALUES ($2) RETURNING id),
                      ended AS (DELETE FROM gradio_bus_events WHERE event_id = ANY($3::text[]))
                 SELECT pg_notify($1, '${REF}' || spilled.id) FROM spilled`,
          values: [channel, batches[i], ended],
        });
        this.stats.spilled++;
      } else if (ended.length > 0) {
        await client.query({
          name: 'airlock_bus_end',
          text: 'WITH ended AS (DELETE FROM gradio_bus_events WHERE event_id = ANY($3::text[])) SELECT pg_notify($1, $2)',
          values: [channel, batches[i], ended],
        });
      } else {
        await client.query({ name: 'airlock_bus_notify', text: 'SELECT pg_notify($1, $2)', values: [channel, batches[i]] });
      }
      this.stats.notifies++;
    }
  }

  /** The publishing connection, opened on first use and again after a loss. */
  #publisher(): Promise<Held> {
    if (!this.#publishing) {
      const opening = this.#pool.connect().then((client) => {
        const held = { client, release: releaseOnce(client) };
        client.on('error', (error) => {
          if (this.#publishing === opening) this.#publishing = null;
          held.release(error);
        });
        return held;
      });
      opening.catch(() => {
        if (this.#publishing === opening) this.#publishing = null;
      });
      this.#publishing = opening;
    }
    return this.#publishing;
  }

  async #listen(): Promise<void> {
    const client = await this.#pool.connect();
    const held = { client, release: releaseOnce(client) };
    try {
      await this.#subscribe(held);
    } catch (error) {
      held.release(error as Error); // half-opened: never kept, never leaked from the pool
      throw error;
    }
    if (this.#closed) held.release(true); // reopened after a loss while the bus was closing
    else this.#listener = held;
  }

  async #subscribe({ client, release }: Held): Promise<void> {
    const { rows } = await client.query<{ schema: string }>('SELECT current_schema() AS schema');
    this.#schema = rows[0].schema;
    const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
    client.on('notification', (n) => {
      if (n.channel === BUS_CHANNEL + this.#schema) this.#inbound.push(n.payload ?? '');
      else if (n.channel === CANCEL_CHANNEL + this.#schema) this.#cancelled(n.payload ?? '');
      else if (n.channel === MAIL_CHANNEL + this.#schema) this.#mail.push(n.payload ?? '');
    });
    client.on('error', (error) => {
      release(error);
      this.#lost(client);
    });
    await client.query(`LISTEN ${quote(BUS_CHANNEL + this.#schema)}`);
    await client.query(`LISTEN ${quote(CANCEL_CHANNEL + this.#schema)}`);
    await client.query(`LISTEN ${quote(MAIL_CHANNEL + this.#schema)}`);
    // This connection is the replica's pulse: while it lives, the replica's events are its own.
    await client.query(
      `INSERT INTO gradio_bus_replicas (replica, backend_pid, backend_start)
       SELECT $1, pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()
       ON CONFLICT (replica) DO UPDATE SET backend_pid = EXCLUDED.backend_pid, backend_start = EXCLUDED.backend_start`,
      [this.replica],
    );
  }

  /** The LISTEN connection broke: notifications in between are lost, so reopen and carry on (documented limit). */
  #lost(client: pg.PoolClient): void {
    if (this.#listener?.client !== client || this.#closed) return;
    this.#listener = null;
    const retry = () => {
      if (this.#closed) return;
      this.#listen().catch(() => setTimeout(retry, 500).unref());
    };
    setTimeout(retry, 100).unref();
  }

  /** A notification's JSON: the payload itself, or the spilled row it names (null when gone). */
  async #unspill(payload: string): Promise<string | null> {
    if (!payload.startsWith(REF)) return payload;
    const { rows } = await this.#pool.query<{ body: string }>('SELECT body FROM gradio_bus_frames WHERE id = $1', [payload.slice(REF.length)]);
    return rows[0]?.body ?? null;
  }

  #apply(ops: BusOp[]): void {
    const mine = `${this.replica}:`;
    for (const op of ops) {
      // This replica's own attach, detach and forget were applied when they happened.
      if ((op.o === 'a' || op.o === 'd') && op.k.startsWith(mine)) continue;
      if (op.o === 'x' && op.by === this.replica) {
        // Applied again at its place in the order, silently (its events stopped then): a join that
        // was still on its way in when it happened is dropped here as on every other replica.
        this.#mirror.apply(op);
        continue;
      }
      if (op.o === 'b') {
        this.#barriers.get(op.k)?.();
        continue;
      }
      for (const s of this.#mirror.apply(op)) this.#forgotten(s);
    }
  }

  #deliver(json: string): void {
    const { k, r, p } = JSON.parse(json) as { k: string; r: string; p: string };
    if (r === this.replica) this.#mailboxes.get(k)?.(p);
  }

  #cancelled(payload: string): void {
    try {
      const { e, r } = JSON.parse(payload) as { e: string; r: string };
      if (r === this.replica) this.#cancel(e);
    } catch {
      // not ours to understand
    }
  }
}

/**
 * Notification payloads handled one at a time in arrival order: each is resolved (a spilled one
 * is read from its row) before the next, so a large batch never overtakes or falls behind.
 */
class OrderedInbox {
  #queue: string[] = [];
  #running = false;

  constructor(
    private readonly resolve: (payload: string) => Promise<string | null>,
    private readonly handle: (json: string) => void,
    private readonly failed: (error: unknown) => void,
  ) {}

  push(payload: string): void {
    this.#queue.push(payload);
    if (!this.#running) void this.#drain();
  }

  async #drain(): Promise<void> {
    this.#running = true;
    while (this.#queue.length > 0) {
      try {
        const json = await this.resolve(this.#queue.shift()!);
        if (json !== null) this.handle(json);
      } catch (error) {
        this.failed(error);
      }
    }
    this.#running = false;
  }
}
