/**
 * The PostgreSQL ledger. A head row per conversation is incremented in the writer's transaction:
 * the row lock serialises writers of one conversation and a rollback takes its seqs back, so seq
 * is gap-free. Commits NOTIFY a channel named after the schema (tests share one database), which
 * wakes subscribers in every process.
 * @module
 */
import { getEventHead } from '../db/event-heads.ts';
import { releaseOnce, withTransaction, type Pool, type Queryable } from '../db/index.ts';
import { storableJson } from '../db/storable.ts';
import { validateDraft, type EventDraft, type LedgerEvent } from './events.ts';
import { ANY_CONVERSATION, runIdOf, type CommitListener, type Ledger, type LedgerPage } from './ledger.ts';

const CHANNEL_PREFIX = 'airlock_events:';

interface EventRow {
  conversation_id: string;
  seq: string;
  run_id: string;
  kind: string;
  payload: unknown;
  created_at: Date;
}

const toEvent = (row: EventRow): LedgerEvent =>
  ({ seq: Number(row.seq), conversation_id: row.conversation_id, run_id: row.run_id, kind: row.kind, payload: row.payload, created_at: row.created_at.toISOString() }) as LedgerEvent;

const COLUMNS = 'conversation_id, seq, run_id, kind, payload, created_at';

type Release = ReturnType<typeof releaseOnce>;

export class PgLedger implements Ledger {
  readonly #pool: Pool;
  readonly #listeners = new Map<string, Set<CommitListener>>();
  /** The LISTEN connection, as the release that hands it back (once: its error and close() may both try). */
  #listener: Promise<Release> | null = null;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async append(conversationId: string, drafts: EventDraft[], options: { tx?: Queryable } = {}): Promise<LedgerEvent[]> {
    const valid = drafts.map(validateDraft); // before any SQL: a bad payload never lands
    if (valid.length === 0) return [];
    const write = (tx: Queryable) => insertEvents(tx, conversationId, valid);
    return options.tx ? write(options.tx) : withTransaction(this.#pool, write);
  }

  async read(conversationId: string, { after, limit }: LedgerPage): Promise<LedgerEvent[]> {
    const { rows } = await this.#pool.query<EventRow>(
      `SELECT ${COLUMNS} FROM conversation_events WHERE conversation_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
      [conversationId, after, limit],
    );
    return rows.map(toEvent);
  }

  async readRun(conversationId: string, runId: string): Promise<LedgerEvent[]> {
    const { rows } = await this.#pool.query<EventRow>(
      `SELECT ${COLUMNS} FROM conversation_events WHERE conversation_id = $1 AND run_id = $2 ORDER BY seq`,
      [conversationId, runId],
    );
    return rows.map(toEvent);
  }

  async head(conversationId: string): Promise<number> {
    return getEventHead(this.#pool, conversationId);
  }

  subscribe(conversationId: string, listener: CommitListener): () => void {
    let set = this.#listeners.get(conversationId);
    if (!set) this.#listeners.set(conversationId, (set = new Set()));
    set.add(listener);
    this.#listen();
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(conversationId);
    };
  }

  async wake(conversationId: string): Promise<void> {
    await this.#pool.query(`SELECT pg_notify('${CHANNEL_PREFIX}' || current_schema(), $1 || ':0')`, [conversationId]);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    const release = await this.#listener?.catch(() => null);
    this.#listener = null;
    release?.(true);
  }

  /**
   * One LISTEN connection per ledger, opened on the first subscriber and reopened after a loss.
   * A lost or half-opened connection is handed back with its error (exactly once), so the pool
   * discards it: kept checked out, each outage would leak one of the pool's few connections.
   */
  #listen(): void {
    if (this.#listener) return;
    const opening: Promise<Release> = (async () => {
      const client = await this.#pool.connect();
      const drop = releaseOnce(client);
      try {
        const { rows } = await client.query<{ schema: string }>('SELECT current_schema() AS schema');
        client.on('notification', (n) => this.#notified(n.payload ?? ''));
        client.on('error', (error) => {
          drop(error);
          this.#lost(opening);
        });
        await client.query(`LISTEN "${(CHANNEL_PREFIX + rows[0].schema).replaceAll('"', '""')}"`);
        return drop;
      } catch (error) {
        drop(error as Error);
        throw error;
      }
    })();
    opening.catch(() => this.#lost(opening));
    this.#listener = opening;
  }

  #lost(which: Promise<Release>): void {
    if (this.#listener !== which) return;
    this.#listener = null;
    // Wake everyone: they re-read from their cursor, so nothing committed meanwhile is missed.
    for (const [, set] of this.#listeners) set.forEach((l) => l(0));
    if (this.#listeners.size) setTimeout(() => this.#listeners.size && this.#listen(), 500).unref();
  }

  #notified(payload: string): void {
    const [conversationId, seq] = payload.split(':');
    this.#listeners.get(conversationId)?.forEach((l) => l(Number(seq), conversationId));
    this.#listeners.get(ANY_CONVERSATION)?.forEach((l) => l(Number(seq), conversationId));
  }
}

/**
 * One statement (one round trip): take the seqs from the head row, insert the events, notify.
 * The head row stays locked until the caller's transaction ends, so seqs are gap-free. A NUL in a
 * payload (model or tool text; jsonb refuses it) is stored as U+FFFD.
 */
async function insertEvents(tx: Queryable, conversationId: string, drafts: EventDraft[]): Promise<LedgerEvent[]> {
  const { rows } = await tx.query<EventRow>(
    `WITH head AS (
       INSERT INTO conversation_event_heads (conversation_id, last_seq) VALUES ($1, $2)
       ON CONFLICT (conversation_id) DO UPDATE SET last_seq = conversation_event_heads.last_seq + EXCLUDED.last_seq
       RETURNING last_seq
     ), inserted AS (
       INSERT INTO conversation_events (conversation_id, seq, run_id, kind, payload)
       SELECT $1, head.last_seq - $2 + t.n, t.r, t.k, t.p
       FROM head, unnest($3::uuid[], $4::text[], $5::jsonb[]) WITH ORDINALITY AS t(r, k, p, n)
       RETURNING ${COLUMNS}
     )
     SELECT inserted.*, pg_notify('${CHANNEL_PREFIX}' || current_schema(), $1 || ':' || head.last_seq) IS NULL AS _n
     FROM inserted, head ORDER BY inserted.seq`,
    [conversationId, drafts.length, drafts.map(runIdOf), drafts.map((d) => d.kind), drafts.map((d) => storableJson(d.payload))],
  );
  return rows.map(toEvent);
}
