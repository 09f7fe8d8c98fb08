/**
 * GET /api/audit/export?from&to (admin, issue 28 item 4): the audit as a self-contained JSONL
 * stream (format: audit/export-check.ts): the JWKS, the chain's genesis and range, its signed heads
 * (signed just before: routes.ts), the rows with
 * their hashes, the receipts of the approvals decided in the range, and each tenant's head, all
 * read in one snapshot and streamed page by page. `./airlock audit verify --file` checks it offline.
 * @module
 */
import { Readable } from 'node:stream';
import type { JSONWebKeySet } from 'jose';
import type { ExportLine } from '../../audit/export-check.ts';
import { receiptsForAuditRange } from '../../db/approval-receipts.ts';
import { auditChainGenesis, auditChainHeads, auditChainRows } from '../../db/audit.ts';
import { listCheckpoints } from '../../db/audit-checkpoints.ts';
import type { Pool } from '../../db/index.ts';

export interface ExportRange {
  from?: string;
  to?: string;
}

async function* exportLines(pool: Pool, jwks: JSONWebKeySet, range: ExportRange): AsyncGenerator<string> {
  const line = (l: ExportLine | JSONWebKeySet) => `${JSON.stringify(l)}\n`;
  yield line(jwks);
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    yield line({ type: 'chain', genesis: await auditChainGenesis(client), from: range.from ?? null, to: range.to ?? null });
    for (const c of await listCheckpoints(client, range)) yield line({ type: 'checkpoint', ...c });
    for await (const row of auditChainRows(client, range)) yield line({ type: 'row', ...row });
    for (const r of await receiptsForAuditRange(client, range)) yield line({ type: 'receipt', approval_id: r.approvalId, kid: r.kid, receipt: r.receipt });
    for (const head of await auditChainHeads(client)) yield line({ type: 'head', ...head });
  } finally {
    // Also when the client went away mid-stream (the generator is returned early).
    await client.query('COMMIT').catch((e: Error) => void (broken = e));
    client.release(broken);
  }
}

/** The export as a stream of lines. */
export function auditExport(pool: Pool, jwks: JSONWebKeySet, range: ExportRange): Readable {
  return Readable.from(exportLines(pool, jwks, range));
}
