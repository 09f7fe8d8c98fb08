/**
 * The processes table: which gateway process owns which database session. A process registers
 * the backend of one dedicated connection; while that backend is in `pg_stat_activity` the
 * process is alive. A process killed with SIGKILL (or a machine that vanished) takes its backend
 * with it, so others see it gone as soon as PostgreSQL does, with no clock involved.
 * @module
 */
import type { Queryable } from './pool.ts';

/**
 * SQL: true when `ownerExpr` names a registered process whose backend is gone. An owner with no
 * row (a process that never registered) is never "gone": its leases fall back to their TTL.
 * `backend_start` tells a reused pid apart; another role's sessions show it as NULL, and count as
 * alive (a false "alive" only means waiting for the TTL, a false "gone" would break a lease).
 * `ownerExpr` must be qualified (`l.owner`): the subquery's own alias is `gone`.
 */
export function ownerIsGone(ownerExpr: string): string {
  return `EXISTS (SELECT 1 FROM processes gone WHERE gone.owner = ${ownerExpr} AND NOT EXISTS (
            SELECT 1 FROM pg_stat_activity a WHERE a.pid = gone.backend_pid AND (a.backend_start IS NULL OR a.backend_start = gone.backend_start)))`;
}

/** Registers (or re-registers under `epoch`) the backend of the connection `q` as `owner`'s pulse. */
export async function registerProcess(q: Queryable, input: { owner: string; pid: number; epoch: number }): Promise<void> {
  await q.query(
    `INSERT INTO processes (owner, pid, epoch, backend_pid, backend_start, heartbeat_at)
     SELECT $1, $2, $3, pid, backend_start, now() FROM pg_stat_activity WHERE pid = pg_backend_pid()
     ON CONFLICT (owner) DO UPDATE SET pid = EXCLUDED.pid, epoch = EXCLUDED.epoch, backend_pid = EXCLUDED.backend_pid,
       backend_start = EXCLUDED.backend_start, heartbeat_at = now()`,
    [input.owner, input.pid, input.epoch],
  );
}

/** Marks `owner` as heartbeating now (a hung process stops doing this while its backend lives on). */
export async function heartbeatProcess(q: Queryable, owner: string): Promise<void> {
  await q.query('UPDATE processes SET heartbeat_at = now() WHERE owner = $1', [owner]);
}

/** Forgets `owner` (a graceful stop) and, while at it, processes gone for more than a day. */
export async function removeProcess(q: Queryable, owner: string): Promise<void> {
  await q.query(`DELETE FROM processes WHERE owner = $1 OR (heartbeat_at < now() - interval '1 day' AND ${ownerIsGone('processes.owner')})`, [owner]);
}

export interface LivePeer {
  owner: string;
  pid: number;
}

/**
 * Other processes alive now: their backend is in `pg_stat_activity` and they heartbeated within
 * `withinS` seconds (issue 23 item 8: a second full process on one database without REPLICAS).
 */
export async function livePeers(q: Queryable, input: { owner: string; withinS: number }): Promise<LivePeer[]> {
  const { rows } = await q.query<LivePeer>(
    `SELECT p.owner, p.pid FROM processes p
     WHERE p.owner <> $1 AND p.heartbeat_at > now() - make_interval(secs => $2) AND NOT ${ownerIsGone('p.owner')}`,
    [input.owner, input.withinS],
  );
  return rows;
}
