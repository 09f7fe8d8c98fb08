/**
 * `./airlock audit …` and `./airlock receipt …` (issue 28): checks anyone can run outside the
 * server; `./airlock users …` (issue 39, cli-users.ts): user management. `./airlock` runs this
 * file itself (`npm run` would swallow the flags).
 *   audit verify [--from ID] [--to ID]   the database's chain (DATABASE_URL, else DATA_DIR's embedded one)
 *   audit verify --file export.jsonl     an export, offline
 *   receipt verify FILE --jwks URL|FILE [--action FILE]   a receipt (a compact JWS, or the route's
 *     {receipt, kid}) against the JWKS, and the action it names (`{tool, args, user}`)
 * Prints `ok N rows`, or `tampered: row <id> (<what>)` and exits 1 (a receipt: `ok receipt …` or
 * `refused: <why>`); bad usage exits 2.
 * @module
 */
import { parseArgs } from 'node:util';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { chainWalker, verdictLine, type ChainVerdict } from '../server/audit/chain.ts';
import { receiptLine, verifyReceipt } from '../server/audit/receipt.ts';
import { checkExport } from '../server/audit/export-check.ts';
import { auditChainGenesis, auditChainHeads, auditChainRows } from '../server/db/audit.ts';
import { withSnapshot } from '../server/db/index.ts';
import { openDatabase } from './cli-db.ts';
import { usersCommand, USERS_USAGE } from './cli-users.ts';

const USAGE = `usage: ./airlock audit verify [--from ID] [--to ID] | --file export.jsonl
       ./airlock receipt verify FILE --jwks URL|FILE [--action FILE]
${USERS_USAGE}`;

function usage(message?: string): never {
  process.stderr.write(`${message ? `${message}\n` : ''}${USAGE}\n`);
  process.exit(2);
}

const [group, command, ...rest] = process.argv.slice(2);
if (group === 'users') process.exit(await usersCommand(process.argv.slice(3), usage));
if (command !== 'verify' || (group !== 'audit' && group !== 'receipt')) usage();
const { values, positionals } = parseArgs({
  args: rest,
  allowPositionals: true,
  options: { from: { type: 'string' }, to: { type: 'string' }, file: { type: 'string' }, jwks: { type: 'string' }, action: { type: 'string' } },
});
for (const id of [values.from, values.to]) if (id !== undefined && !/^\d{1,18}$/.test(id)) usage(`not a row id: ${id}`);

const ok = group === 'audit' ? await auditVerify() : await receiptVerify();
process.exit(ok ? 0 : 1);

async function auditVerify(): Promise<boolean> {
  return print(values.file ? await verifyExportFile(values.file) : await verifyDatabase());
}

function print(v: ChainVerdict): boolean {
  process.stdout.write(`${verdictLine(v)}\n`);
  return v.ok;
}

async function verifyDatabase(): Promise<ChainVerdict> {
  const { pool, close } = await openDatabase({ migrate: false });
  try {
    return await withSnapshot(pool, async (q) => {
      const walk = chainWalker({ genesis: values.from ? null : await auditChainGenesis(q), from: values.from });
      for await (const row of auditChainRows(q, { from: values.from, to: values.to })) if (walk.push(row)) break;
      return walk.end(values.to ? null : await auditChainHeads(q));
    });
  } finally {
    await close();
  }
}

/** An export checked offline, line by line: no database, no server. */
async function verifyExportFile(file: string): Promise<ChainVerdict> {
  return checkExport(createInterface({ input: createReadStream(file), crlfDelay: Infinity }));
}

async function receiptVerify(): Promise<boolean> {
  const [file] = positionals;
  if (!file || !values.jwks) usage('receipt verify needs FILE and --jwks');
  const text = (await readFile(file, 'utf8')).trim();
  const receipt = text.startsWith('{') ? (JSON.parse(text) as { receipt: string }).receipt : text;
  const jwks = /^https?:\/\//.test(values.jwks) ? await (await fetch(values.jwks)).json() : JSON.parse(await readFile(values.jwks, 'utf8'));
  const action = values.action ? JSON.parse(await readFile(values.action, 'utf8')) : undefined;
  const check = await verifyReceipt(receipt, jwks, action);
  process.stdout.write(`${receiptLine(check)}\n`);
  return check.ok;
}
