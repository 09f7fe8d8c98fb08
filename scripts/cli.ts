/**
 * `./airlock audit …` and `./airlock receipt …` (issue 28): checks anyone can run outside the
 * server; `./airlock users …` (issue 39, cli-users.ts): user management. `./airlock` runs this
 * file itself (`npm run` would swallow the flags).
 *   audit verify [--from ID] [--to ID]   the database's chain (DATABASE_URL, else DATA_DIR's embedded
 *     one, default `.data` as the server's: cli-database.ts; a running server's is read as it runs)
 *   audit verify --file export.jsonl     an export, offline
 *     either with [--checkpoint-key FILE]: the signed heads (issue 36 item 3) are checked against that
 *     public JWK (GET /api/audit/checkpoint-key), else against the key derived here from the KEK
 *     (KEY_ENCRYPTION_KEY, else DATA_DIR's key-encryption.key), never against a key read from the
 *     database or the export. Signed heads and no key: `refused: …`, exit 2.
 *   receipt verify FILE --jwks URL|FILE [--action FILE]   a receipt (a compact JWS, or the route's
 *     {receipt, kid}) against the JWKS, and the action it names (`{tool, args, user}`)
 * Prints `ok N rows`, or `tampered: row <id> (<what>)` and exits 1 (a receipt: `ok receipt …` or
 * `refused: <why>`); bad usage, or no database to read (none there, or one Airlock never started
 * on), exits 2 with one line on stderr, never a stack trace.
 * @module
 */
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { JWK } from 'jose';
import { chainWalker, verdictLine, type ChainVerdict } from '../server/audit/chain.ts';
import { receiptLine, verifyReceipt } from '../server/audit/receipt.ts';
import { checkExport } from '../server/audit/export-check.ts';
import { checkpointKeyOf, checkpointSigner, NoCheckpointKeyError, signedHeadsOf } from '../server/audit/checkpoint-key.ts';
import { kekSecret } from '../server/auth/key-cipher.ts';
import { auditChainGenesis, auditChainHeads, auditChainRows } from '../server/db/audit.ts';
import { listCheckpoints } from '../server/db/audit-checkpoints.ts';
import { createPool, withSnapshot } from '../server/db/index.ts';
import { CliError, openCliDatabase } from './cli-database.ts';
import { usersCommand, USERS_USAGE } from './cli-users.ts';

const USAGE = `usage: ./airlock audit verify [--from ID] [--to ID] | --file export.jsonl  [--checkpoint-key FILE]
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
  options: { from: { type: 'string' }, to: { type: 'string' }, file: { type: 'string' }, jwks: { type: 'string' }, action: { type: 'string' }, 'checkpoint-key': { type: 'string' } },
});
for (const id of [values.from, values.to]) if (id !== undefined && !/^\d{1,18}$/.test(id)) usage(`not a row id: ${id}`);

try {
  const ok = group === 'audit' ? await auditVerify() : await receiptVerify();
  process.exit(ok ? 0 : 1);
} catch (error) {
  // Not a verdict: the check could not run. One line (the stack only with LOG_LEVEL=debug).
  process.stderr.write(`${group} verify: ${(error as Error).message}\n`);
  if (!(error instanceof CliError) && ['debug', 'trace'].includes(process.env.LOG_LEVEL ?? '')) process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(2);
}

async function auditVerify(): Promise<boolean> {
  try {
    return print(values.file ? await verifyExportFile(values.file) : await verifyDatabase());
  } catch (error) {
    if (!(error instanceof NoCheckpointKeyError)) throw error;
    process.stdout.write(`refused: ${error.message}\n`);
    process.exit(2);
  }
}

/** The key signed heads are checked against: the file given, else the one the local KEK derives; null: none here. */
async function checkpointKey(): Promise<JWK | null> {
  const file = values['checkpoint-key'];
  if (file) {
    try {
      return checkpointKeyOf(JSON.parse(await readFile(file, 'utf8')));
    } catch (error) {
      usage(`--checkpoint-key ${file}: ${(error as Error).message}`);
    }
  }
  const secret = kekSecret({ keyEncryptionKey: process.env.KEY_ENCRYPTION_KEY || undefined, dataDir: resolve(process.env.DATA_DIR ?? '.data') }, { create: false });
  return secret ? (await checkpointSigner(secret)).publicJwk : null;
}

function print(v: ChainVerdict): boolean {
  process.stdout.write(`${verdictLine(v)}\n`);
  return v.ok;
}

async function verifyDatabase(): Promise<ChainVerdict> {
  const database = await openCliDatabase();
  const pool = createPool(database.url, { max: 1 });
  try {
    const key = await checkpointKey();
    return await withSnapshot(pool, async (q) => {
      const signed = await signedHeadsOf(await listCheckpoints(q, { from: values.from, to: values.to }), key);
      if ('failed' in signed) return signed.failed;
      const walk = chainWalker({ genesis: values.from ? null : await auditChainGenesis(q), from: values.from, signed: signed.heads });
      for await (const row of auditChainRows(q, { from: values.from, to: values.to })) if (walk.push(row)) break;
      return walk.end(values.to ? null : await auditChainHeads(q));
    });
  } catch (error) {
    // 42P01 undefined_table: a database Airlock never migrated has no audit log to check.
    if ((error as { code?: string }).code === '42P01') throw new CliError(`${database.label} has no Airlock audit log (Airlock never started on it): nothing to verify`);
    throw error;
  } finally {
    await pool.end();
    await database.close();
  }
}

/** An export checked offline, line by line: no database, no server. */
async function verifyExportFile(file: string): Promise<ChainVerdict> {
  const key = await checkpointKey(); // first: the lines would start flowing while it is read
  return checkExport(createInterface({ input: createReadStream(file), crlfDelay: Infinity }), key);
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
