/**
 * The audit export's format and its offline check (issue 28 item 4). An export is JSONL: the first
 * line is the JWKS; then `{type: "chain", genesis, from, to}`; the signed heads of the range
 * (`{type: "checkpoint", id, tenant, last_id, hash, jws, created_at}`, issue 36 item 3); the rows (`{type: "row", …ChainRow}`,
 * id order); each decided approval's receipt in the range (`{type: "receipt", approval_id, kid,
 * receipt}`); and each tenant's head (`{type: "head", tenant, last_id, hash}`). The check needs no
 * database: the chain walk (chain.ts) with the signed heads (their signatures against the checkpoint
 * key the checker brings), each receipt's signature against the first line's JWKS and its
 * audit_hash against the exported rows, and the heads.
 * @module
 */
import type { JSONWebKeySet, JWK } from 'jose';
import { chainWalker, type ChainHead, type ChainRow, type ChainVerdict } from './chain.ts';
import { signedHeadsOf, type StoredCheckpoint } from './checkpoint-key.ts';
import { verifyReceipt } from './receipt.ts';

export type ExportLine =
  | { type: 'chain'; genesis: string; from: string | null; to: string | null }
  | ({ type: 'checkpoint'; hash: string; created_at: string } & StoredCheckpoint)
  | ({ type: 'row' } & ChainRow)
  | { type: 'receipt'; approval_id: string; kid: string; receipt: string }
  | ({ type: 'head' } & ChainHead);

/**
 * Checks an export given line by line; names the first row (or line) that does not hold. Its signed
 * heads are checked against `checkpointKey` only, never a key the export carries; with signed heads
 * and no key it throws NoCheckpointKeyError.
 */
export async function checkExport(lines: AsyncIterable<string> | Iterable<string>, checkpointKey: JWK | null = null): Promise<ChainVerdict> {
  let n = 0;
  let jwks: JSONWebKeySet | null = null;
  let chain: Extract<ExportLine, { type: 'chain' }> | null = null;
  let walk: ReturnType<typeof chainWalker> | null = null;
  const checkpoints: StoredCheckpoint[] = [];
  const rowOfHash = new Map<string, string>();
  const receipts: Extract<ExportLine, { type: 'receipt' }>[] = [];
  const heads: ChainHead[] = [];
  const badLine = (what: string): ChainVerdict => ({ ok: false, id: `line ${n}`, what });
  /** The walk starts at the first row (or the end): the signed heads before it are all known then. */
  const startWalk = async (c: NonNullable<typeof chain>) => {
    const signed = await signedHeadsOf(checkpoints, checkpointKey);
    if ('failed' in signed) return signed.failed;
    walk = chainWalker({ genesis: c.from ? null : c.genesis, from: c.from, signed: signed.heads });
    return null;
  };

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
    if (typed.type === 'chain') chain = typed;
    else if (typed.type === 'checkpoint') {
      if (walk) return badLine('a signed head after the rows');
      checkpoints.push({ id: typed.id, tenant: typed.tenant, last_id: typed.last_id, jws: typed.jws });
    } else if (typed.type === 'row') {
      if (!chain) return badLine('a row before the chain line');
      if (!walk) {
        const failed = await startWalk(chain);
        if (failed) return failed;
      }
      const { type: _, ...row } = typed;
      const failed = walk!.push(row);
      if (failed) return failed;
      if (row.hash) rowOfHash.set(row.hash, row.id);
    } else if (typed.type === 'receipt') receipts.push(typed);
    else if (typed.type === 'head') heads.push({ tenant: typed.tenant, last_id: typed.last_id, hash: typed.hash });
    else return badLine('an unknown line type');
  }
  if (!jwks || !chain) return { ok: false, id: `line ${n}`, what: 'the export is incomplete (no JWKS or no chain line)' };
  if (!walk) {
    const failed = await startWalk(chain);
    if (failed) return failed;
  }
  for (const r of receipts) {
    const check = await verifyReceipt(r.receipt, jwks);
    if (!check.ok) return { ok: false, id: `receipt ${r.approval_id}`, what: check.reason };
    if (check.claims.approval_id !== r.approval_id) return { ok: false, id: `receipt ${r.approval_id}`, what: `it is the receipt of ${check.claims.approval_id}` };
    if (!rowOfHash.has(check.claims.audit_hash)) return { ok: false, id: `receipt ${r.approval_id}`, what: 'its audit_hash is no exported row' };
  }
  return walk!.end(chain.to ? null : heads);
}
