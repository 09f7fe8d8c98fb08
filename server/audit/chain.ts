/**
 * The audit chain, pure (issue 28 item 1): what a row's hash covers, and the walk that checks a
 * sequence of rows, wherever they come from (the database, an export file). Each tenant has one
 * chain; a row's hash is SHA-256 over the canonical JSON of a fixed column list plus the hash of the
 * tenant's previous row, so changing, removing or inserting a row breaks the chain at that row (or
 * at the next one) and the walk names it. Rows older than the chain are unhashed; the first chained
 * row of each tenant links to `genesis:<last old id>`.
 * @module
 */
import { hashJson } from '../canonical-json.ts';

/** An audit row as the chain sees it: the hashed columns, `at` as ISO milliseconds, ids as strings. */
export interface ChainRow {
  id: string;
  tenant: string | null;
  at: string;
  service_actor: string | null;
  user_id: string | null;
  username: string | null;
  user_role: string | null;
  operation: string;
  method: string;
  path: string;
  arguments: unknown;
  outcome: string;
  status_code: number;
  error_code: string | null;
  tool_call_id: string | null;
  conversation_id: string | null;
  duration_ms: number | null;
  policy_action: string | null;
  policy_scope: string | null;
  policy_matched: boolean | null;
  prev_hash: string | null;
  hash: string | null;
}

/** A tenant's chain head as stored beside the rows (its newest row). */
export interface ChainHead {
  tenant: string;
  last_id: string | null;
  hash: string;
}

/** The columns a row's hash covers, in the order they are listed (the canonical JSON sorts them anyway). */
export const HASHED_COLUMNS = [
  'id', 'tenant', 'at', 'service_actor', 'user_id', 'username', 'user_role', 'operation', 'method', 'path',
  'arguments', 'outcome', 'status_code', 'error_code', 'tool_call_id', 'conversation_id', 'duration_ms',
  'policy_action', 'policy_scope', 'policy_matched', 'prev_hash',
] as const satisfies readonly (keyof ChainRow)[];

/** Where every tenant's chain starts: the last row written before the chain existed. */
export function genesisHash(lastOldId: string): string {
  return `genesis:${lastOldId}`;
}

/** The row's hash: SHA-256 (hex) of the canonical JSON of its hashed columns, prev_hash included. */
export function rowHash(row: Omit<ChainRow, 'hash'>): string {
  return hashJson(Object.fromEntries(HASHED_COLUMNS.map((c) => [c, row[c] ?? null])));
}

/** A signed head (issue 36 item 3) as its signature says: `id` names it, the rest are its signed claims. */
export interface SignedHead {
  id: string;
  tenant: string;
  last_id: string;
  hash: string;
}

export type ChainVerdict = { ok: true; rows: number } | { ok: false; id: string; what: string };

/** The one line `audit verify` prints for a verdict. */
export function verdictLine(v: ChainVerdict): string {
  if (v.ok) return `ok ${v.rows} rows`;
  // A row is named by its id; an export's line or receipt by what it is ("line 7", "receipt <id>").
  return `tampered: ${/^\d+$/.test(v.id) ? `row ${v.id}` : v.id} (${v.what})`;
}

/**
 * Walks rows in id order (push each, then end). `genesis` is the last old id when the walk starts at
 * the chain's beginning (each tenant's first row must link to it); null when it starts mid-chain (a
 * `--from`), where each tenant's first row is taken as it is. `signed`: the signed heads of the range,
 * their signatures already checked; at each one's last_id the recomputed hash must be the signed one.
 * A writer who rewrote a row and every later hash and head passes the links but not that: the walk
 * names the first row of the tenant after the newest signed head that still holds (the change is
 * there or later, up to the failing head's row), and the failing head.
 */
export function chainWalker(options: { genesis: string | null; from?: string | null; signed?: readonly SignedHead[] }) {
  const last = new Map<string, { id: string; hash: string }>();
  const signedAt = new Map<string, SignedHead[]>();
  for (const head of options.signed ?? []) signedAt.set(head.last_id, [...(signedAt.get(head.last_id) ?? []), head]);
  /** Per tenant, its first row after the newest signed head that held (where a difference can start). */
  const sinceHeld = new Map<string, string>();
  let rows = 0;
  let failure: ChainVerdict | null = null;
  const fail = (id: string, what: string): ChainVerdict => (failure ??= { ok: false, id, what });

  function push(row: ChainRow): ChainVerdict | null {
    if (failure) return failure;
    if (row.hash === null || row.prev_hash === null) {
      if (options.genesis !== null && BigInt(row.id) <= BigInt(options.genesis)) return null;
      return fail(row.id, 'inserted: no hash, written after the chain began');
    }
    if (rowHash(row) !== row.hash) return fail(row.id, 'changed: its content does not match its hash');
    const tenant = row.tenant ?? '';
    const before = last.get(tenant);
    if (before && row.prev_hash !== before.hash) {
      return fail(row.id, `prev_hash does not link to row ${before.id}: a row between them was removed, or one of them rewritten`);
    }
    if (!before && options.genesis !== null && row.prev_hash !== genesisHash(options.genesis)) {
      return fail(row.id, "prev_hash is not the chain's genesis: a row before it was removed, or it was inserted");
    }
    last.set(tenant, { id: row.id, hash: row.hash });
    rows += 1;
    if (!sinceHeld.has(tenant)) sinceHeld.set(tenant, row.id);
    for (const head of signedAt.get(row.id) ?? []) {
      if (head.tenant !== tenant || head.hash !== row.hash) return fail(sinceHeld.get(tenant)!, `signed head ${head.id}`);
      sinceHeld.delete(tenant);
    }
    signedAt.delete(row.id);
    return null;
  }

  /** Checks each tenant's last row against its stored head (skipped when the walk stops early, a `--to`). */
  function end(heads: ChainHead[] | null): ChainVerdict {
    if (failure) return failure;
    for (const [id, [head]] of signedAt) return fail(id, `signed head ${head.id}: its row is gone`);
    for (const head of heads ?? []) {
      const tail = last.get(head.tenant);
      if (head.last_id === null) continue;
      if (!tail) {
        if (options.from && BigInt(head.last_id) < BigInt(options.from)) continue;
        return fail(head.last_id, "removed: the chain's head names it, and no row of its tenant is left");
      }
      if (tail.id === head.last_id) {
        if (tail.hash === head.hash) continue;
        return fail(tail.id, "changed: its hash is not the one the chain's head recorded");
      }
      if (BigInt(head.last_id) > BigInt(tail.id)) return fail(head.last_id, `removed: the chain's head names it, the last row left is ${tail.id}`);
      return fail(tail.id, `inserted: after the chain's head (row ${head.last_id})`);
    }
    return { ok: true, rows };
  }

  return { push, end };
}
