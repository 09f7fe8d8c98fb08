/**
 * The conversation_leases table: a conversation streams in one tab at a time. A lease row names
 * its holder (e.g. a run id), its state and when it expires; each transition is one atomic
 * statement, so two tabs racing for a conversation cannot both win.
 * @module
 */
import type { Queryable } from './pool.ts';
import { ownerIsGone } from './processes.ts';

export type LeaseState = 'streaming' | 'awaiting_confirmation';

export interface Lease {
  conversationId: string;
  holder: string;
  state: LeaseState;
  since: Date;
  expiresAt: Date;
  /** expires_at > now() by the database clock at read time. */
  held: boolean;
}

interface LeaseRow {
  conversation_id: string;
  holder: string;
  state: LeaseState;
  since: Date;
  expires_at: Date;
  held: boolean;
}

const COLUMNS = 'l.conversation_id, l.holder, l.state, l.since, l.expires_at, (l.expires_at > now()) AS held';

function toLease(row: LeaseRow): Lease {
  return {
    conversationId: row.conversation_id,
    holder: row.holder,
    state: row.state,
    since: row.since,
    expiresAt: row.expires_at,
    held: row.held,
  };
}

/** Pure: is this lease in force at `now`? (For callers holding a row read earlier.) */
export function isLeaseHeld({ lease, now }: { lease: Pick<Lease, 'expiresAt'> | null; now: Date }): boolean {
  return lease !== null && lease.expiresAt.getTime() > now.getTime();
}

/**
 * Takes the lease when it is free, expired, or already ours (then state and expiry are updated;
 * `since` is kept unless the state changes); with `takeOverPause`, also from a run paused for
 * approval. Returns true when `holder` now holds it. Atomic, one round trip.
 * @example if (!(await tryTakeLease(pool, { conversationId, holder: runId, state: 'streaming', ttlS: 30 }))) throw busy;
 */
/**
 * When an insert into `conversation_leases AS l` meets a lease: taken when it expired, when we
 * hold it, when the process that streams in it is gone (db/processes.ts: a killed replica frees
 * its conversations at once, the TTL stays the backstop for a hung one), or (`takeOverPause`, an
 * SQL boolean) when a paused run left it awaiting a decision. A pause outlives its process on
 * purpose: the approval is answered after a restart. Shared with db/turn-opening.ts, which takes
 * the lease inside a larger statement.
 */
export function takeLeaseOnConflict(takeOverPause: string): string {
  return `ON CONFLICT (conversation_id) DO UPDATE SET
       holder = excluded.holder,
       owner = excluded.owner,
       state = excluded.state,
       since = CASE WHEN l.holder = excluded.holder AND l.state = excluded.state AND l.expires_at > now()
                    THEN l.since ELSE excluded.since END,
       expires_at = excluded.expires_at
     WHERE l.expires_at <= now() OR l.holder = excluded.holder OR (${takeOverPause} AND l.state = 'awaiting_confirmation')
        OR (l.state = 'streaming' AND ${ownerIsGone('l.owner')})`;
}

export async function tryTakeLease(
  q: Queryable,
  input: { conversationId: string; holder: string; state: LeaseState; ttlS: number; takeOverPause?: boolean; owner?: string },
): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO conversation_leases AS l (conversation_id, holder, state, since, expires_at, owner)
     VALUES ($1, $2, $3, now(), now() + make_interval(secs => $4), $6)
     ${takeLeaseOnConflict('$5')}`,
    [input.conversationId, input.holder, input.state, input.ttlS, input.takeOverPause ?? false, input.owner ?? null],
  );
  return rowCount === 1;
}

/** Extends our lease to now + ttlS. False when someone else holds it (or it is gone). */
export async function renewLease(
  q: Queryable,
  input: { conversationId: string; holder: string; ttlS: number },
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE conversation_leases SET expires_at = now() + make_interval(secs => $3)
     WHERE conversation_id = $1 AND holder = $2`,
    [input.conversationId, input.holder, input.ttlS],
  );
  return rowCount === 1;
}

/**
 * Moves our lease to another state (since = now), optionally with a new ttl
 * (e.g. awaiting_confirmation for the approval timeout). False when not ours.
 */
export async function setLeaseState(
  q: Queryable,
  input: { conversationId: string; holder: string; state: LeaseState; ttlS?: number },
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE conversation_leases SET
       state = $3,
       since = CASE WHEN state = $3 THEN since ELSE now() END,
       expires_at = CASE WHEN $4::float8 IS NULL THEN expires_at ELSE now() + make_interval(secs => $4::float8) END
     WHERE conversation_id = $1 AND holder = $2`,
    [input.conversationId, input.holder, input.state, input.ttlS ?? null],
  );
  return rowCount === 1;
}

/** Gives our lease up. False when it was not ours (already taken over or released). */
export async function releaseLease(q: Queryable, input: { conversationId: string; holder: string }): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM conversation_leases WHERE conversation_id = $1 AND holder = $2', [
    input.conversationId,
    input.holder,
  ]);
  return rowCount === 1;
}

/** The lease row (possibly expired: see `held`), or null. */
export async function getLease(q: Queryable, conversationId: string): Promise<Lease | null> {
  const { rows } = await q.query<LeaseRow>(`SELECT ${COLUMNS} FROM conversation_leases l WHERE l.conversation_id = $1`, [
    conversationId,
  ]);
  return rows[0] ? toLease(rows[0]) : null;
}
