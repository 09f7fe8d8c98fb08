/**
 * The audit export's format and its offline check (issue 28 item 4). An export is JSONL: the first
 * line is the JWKS; then `{type: "chain", genesis, from, to}`; the rows (`{type: "row", …ChainRow}`,
 * id order); each decided approval's receipt in the range (`{type: "receipt", approval_id, kid,
 * receipt}`); and each tenant's head (`{type: "head", tenant, last_id, hash}`). The check needs no
 * database: the chain walk (chain.ts), each receipt's signature against the first line's JWKS and its
 * audit_hash against the exported rows, and the heads.
 * @module
 */
import type { JSONWebKeySet } from 'jose';
import { chainWalker, type ChainHead, type ChainRow, type ChainVerdict } from './chain.ts';
import { verifyReceipt } from './receipt.ts';

export type ExportLine =
  | { type: 'chain'; genesis: string; from: string | null; to: string | null }
  | ({ type: 'row' } & ChainRow)
  | { type: 'receipt'; approval_id: string; kid: string; receipt: string }
  | ({ type: 'head' } & ChainHead);

/** Checks an export given line by line; names the first row (or line) that does not hold. */
export async function checkExport(lines: AsyncIterable<string> | Iterable<string>): Promise<ChainVerdict> {
  let n = 0;
  let jwks: JSONWebKeySet | null = null;
  let walk: ReturnType<typeof chainWalker> | null = null;
  let range: { from: string | null; to: string | null } = { from: null, to: null };
  const rowOfHash = new Map<string, string>();
  const receipts: Extract<ExportLine, { type: 'receipt' }>[] = [];
  const heads: ChainHead[] = [];
  const badLine = (what: string): ChainVerdict => ({ ok: false, id: `line ${n}`, what });

  for await (const text of lines) {
    n += 1;
    if (text.trim() === '') continue;
    let line: ExportLine | JSONWebKeySet;
    try {
      line = JSON.parse(text);
    } catch {
      return badLine('not JSON');
    }
    if (n === 1) {
      if (!Array.isArray((line as JSONWebKeySet).keys)) return badLine('the first line is not a JWKS');
      jwks = line as JSONWebKeySet;
      continue;
    }
    const typed = line as ExportLine;
    if (typed.type === 'chain') {
      range = { from: typed.from, to: typed.to };
      walk = chainWalker({ genesis: typed.from ? null : typed.genesis, from: typed.from });
    } else if (typed.type === 'row') {
      if (!walk) return badLine('a row before the chain line');
      const { type: _, ...row } = typed;
      const failed = walk.push(row);
      if (failed) return failed;
      if (row.hash) rowOfHash.set(row.hash, row.id);
    } else if (typed.type === 'receipt') receipts.push(typed);
    else if (typed.type === 'head') heads.push({ tenant: typed.tenant, last_id: typed.last_id, hash: typed.hash });
    else return badLine('an unknown line type');
  }
  if (!jwks || !walk) return { ok: false, id: `line ${n}`, what: 'the export is incomplete (no JWKS or no chain line)' };
  for (const r of receipts) {
    const check = await verifyReceipt(r.receipt, jwks);
    if (!check.ok) return { ok: false, id: `receipt ${r.approval_id}`, what: check.reason };
    if (check.claims.approval_id !== r.approval_id) return { ok: false, id: `receipt ${r.approval_id}`, what: `it is the receipt of ${check.claims.approval_id}` };
    if (!rowOfHash.has(check.claims.audit_hash)) return { ok: false, id: `receipt ${r.approval_id}`, what: 'its audit_hash is no exported row' };
  }
  return walk.end(range.to ? null : heads);
}
