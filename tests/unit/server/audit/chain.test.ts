/**
 * The audit chain's walk, pure (server/audit/chain.ts): rows built as appendAudit builds them;
 * each kind of tampering is named at the row the CLI names; a range walk trusts its first row.
 */
import { describe, expect, it } from 'vitest';
import { chainWalker, genesisHash, rowHash, verdictLine, type ChainHead, type ChainRow } from '../../../../server/audit/chain.ts';

function chain(tenant: string, ids: number[], genesis = '3'): ChainRow[] {
  let prev = genesisHash(genesis);
  return ids.map((id) => {
    const row = {
      id: String(id), tenant, at: new Date(Date.UTC(2026, 11, 5, 0, 0, id)).toISOString(), service_actor: null, user_id: null, username: 'u',
      user_role: null, operation: 'op', method: 'POST', path: '/x', arguments: { id, b: [1, 'x'] }, outcome: 'success', status_code: 200,
      error_code: null, tool_call_id: null, conversation_id: null, duration_ms: null, policy_action: null, policy_scope: null,
      policy_matched: null, prev_hash: prev,
    };
    prev = rowHash(row);
    return { ...row, hash: prev };
  });
}

function walk(rows: ChainRow[], heads: ChainHead[] | null, options: { genesis: string | null; from?: string } = { genesis: '3' }): string {
  const w = chainWalker(options);
  for (const row of [...rows].sort((a, b) => Number(a.id) - Number(b.id))) if (w.push(row)) break;
  return verdictLine(w.end(heads));
}

const head = (rows: ChainRow[]): ChainHead => ({ tenant: rows[0].tenant!, last_id: rows.at(-1)!.id, hash: rows.at(-1)!.hash! });

describe('the chain walk', () => {
  const a = chain('acme', [4, 6, 8]);
  const b = chain('demo', [5, 7]);
  const old = { ...a[0], id: '2', tenant: null, prev_hash: null, hash: null };

  it('accepts interleaved tenants and skips rows older than the genesis', () => {
    expect(walk([old, ...a, ...b], [head(a), head(b)])).toBe('ok 5 rows');
    expect(rowHash({ ...a[1], arguments: { b: [1, 'x'], id: 6 } })).toBe(a[1].hash); // key order does not matter
  });

  it('names a changed, a removed and an inserted row', () => {
    expect(walk([{ ...a[1], outcome: 'denied' }, a[0], a[2], ...b], [head(a), head(b)])).toBe('tampered: row 6 (changed: its content does not match its hash)');
    expect(walk([a[0], a[2], ...b], [head(a), head(b)])).toMatch(/^tampered: row 8 \(prev_hash does not link to row 4/);
    expect(walk([a[0], a[1], ...b], [head(a), head(b)])).toBe("tampered: row 8 (removed: the chain's head names it, the last row left is 6)");
    expect(walk([...a, ...b, { ...old, id: '9' }], [head(a), head(b)])).toBe('tampered: row 9 (inserted: no hash, written after the chain began)');
  });

  it('a range walk (--from) trusts its first row; no heads (--to) skips the head check', () => {
    expect(walk([a[1], a[2]], [head(a), head(b)], { genesis: null, from: '6' })).toMatch(/^tampered: row 7 \(removed/);
    expect(walk([a[1], a[2], b[1]], [head(a), head(b)], { genesis: null, from: '6' })).toBe('ok 3 rows');
    expect(walk([a[0], a[1]], null)).toBe('ok 2 rows');
  });
});
