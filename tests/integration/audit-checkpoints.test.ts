/**
 * Issue 36 item 3, the audit's attack: a database writer rewrites a middle row of the audit chain
 * and recomputes every later row's prev_hash and hash and the chain head (as the audit did: "ok 2455
 * rows"). With signed heads (audit_checkpoints, signed by a key derived from the KEK and never
 * stored) `./airlock audit verify` names it, from the database and from an export; a key the writer
 * adds to signing_keys and heads re-signed with it do not help; without a key it refuses to say ok.
 * Checkpoints are signed every AUDIT_CHECKPOINT_S and go to the webhook endpoints that name
 * `audit.checkpoint`, and only to them.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Fastify from 'fastify';
import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditExport } from '../../server/api/audit/export.ts';
import { signHeads, startAuditCheckpoints } from '../../server/api/audit/checkpoints.ts';
import { rowHash, type ChainRow } from '../../server/audit/chain.ts';
import { checkpointSigner, verifyCheckpoint, type CheckpointSigner } from '../../server/audit/checkpoint-key.ts';
import { checkExport } from '../../server/audit/export-check.ts';
import { appendAudit, auditChainRows, type AuditEntry } from '../../server/db/audit.ts';
import { startWebhookDelivery } from '../../server/v1/webhooks/delivery.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { testConfig } from '../helpers/server.ts';

const KEK = 'checkpoint-test-kek-0123456789abcdef0123';
let db: TestDatabase;
let dir: string;
let alice: string;
let signer: CheckpointSigner;
let keyFile: string;

const entry = (i: number): AuditEntry => ({
  serviceActor: null, userId: alice, username: 'alice', userRole: 'operator', operation: 'tool.call', method: 'POST', path: '/api/tools/deploy',
  arguments: { i, service: 'checkout-api' }, outcome: 'success', statusCode: 200, errorCode: null, toolCallId: null, conversationId: null, durationMs: 5,
});

/** `./airlock audit verify …` on the test's schema; `env` adds to (or, undefined, removes from) its environment. */
async function verify(args: string[], env: Record<string, string | undefined> = { KEY_ENCRYPTION_KEY: KEK }): Promise<{ line: string; code: number }> {
  const { KEY_ENCRYPTION_KEY: _, ...base } = process.env;
  const merged = Object.fromEntries(Object.entries({ ...base, DATABASE_URL: db.url, DATA_DIR: join(dir, 'no-data'), ...env }).filter(([, v]) => v !== undefined)) as Record<string, string>;
  try {
    const { stdout } = await promisify(execFile)('./airlock', ['audit', 'verify', ...args], { env: merged });
    return { line: stdout.trim(), code: 0 };
  } catch (e) {
    const err = e as { stdout: string; code: number };
    return { line: err.stdout.trim(), code: err.code };
  }
}

const chain = async (): Promise<ChainRow[]> => {
  const rows: ChainRow[] = [];
  for await (const r of auditChainRows(db.pool, {})) if (r.tenant === 'acme') rows.push(r);
  return rows;
};

/** The attack: row `index` of acme's chain rewritten, and every later hash and the head recomputed, in SQL. */
async function rewriteAndRechain(index: number): Promise<void> {
  const rows = await chain();
  let prev = rows[index].prev_hash!;
  for (const row of rows.slice(index)) {
    const changed = { ...row, prev_hash: prev, arguments: row.id === rows[index].id ? { ...(row.arguments as object), service: 'payments-db', note: 'rewritten' } : row.arguments };
    changed.hash = rowHash(changed);
    await db.pool.query(`UPDATE audit_log SET arguments = $2, prev_hash = $3, hash = $4 WHERE id = $1`, [row.id, JSON.stringify(changed.arguments), changed.prev_hash, changed.hash]);
    prev = changed.hash;
  }
  await db.pool.query(`UPDATE audit_chain_heads SET hash = $2 WHERE tenant = $1`, ['acme', prev]);
}

/** Runs `fn` (a tampering) and puts the audit tables back as they were afterwards. */
async function tampered(fn: () => Promise<void>): Promise<void> {
  const tables = ['audit_log', 'audit_chain_heads', 'audit_checkpoints', 'signing_keys'];
  for (const t of tables) await db.pool.query(`CREATE TABLE saved_${t} AS SELECT * FROM ${t}`);
  try {
    await fn();
  } finally {
    for (const t of tables) await db.pool.query(`DELETE FROM ${t}; INSERT INTO ${t} SELECT * FROM saved_${t}; DROP TABLE saved_${t}`);
  }
}

async function exportText(): Promise<string[]> {
  let text = '';
  for await (const chunk of auditExport(db.pool, { keys: [] }, {})) text += chunk;
  return text.trim().split('\n');
}

let checkpoints: Awaited<ReturnType<typeof signHeads>> = [];
let rows: ChainRow[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'airlock-checkpoints-'));
  alice = (await db.pool.query<{ id: string }>(`INSERT INTO users (username, password_hash, role, tenant) VALUES ('alice', 'x', 'operator', 'acme') RETURNING id::text`)).rows[0].id;
  signer = await checkpointSigner(KEK);
  keyFile = join(dir, 'checkpoint-key.json');
  await writeFile(keyFile, JSON.stringify(signer.publicJwk));
  for (let i = 0; i < 20; i++) await appendAudit(db.pool, [entry(i)]);
  checkpoints.push(...(await signHeads(db.pool, signer, false)));
  for (let i = 20; i < 40; i++) await appendAudit(db.pool, [entry(i)]);
  checkpoints.push(...(await signHeads(db.pool, signer, false)));
  expect(await signHeads(db.pool, signer, false)).toEqual([]); // a head already signed is not signed again
  rows = await chain();
}, 60_000);

afterAll(async () => {
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('signed heads', () => {
  it('sign each head with the KEK-derived key; an untouched chain verifies with the local KEK or --checkpoint-key', async () => {
    expect(checkpoints.map((c) => c.last_id)).toEqual([rows[19].id, rows[39].id]);
    expect(await verifyCheckpoint(checkpoints[1].jws, signer.publicJwk)).toMatchObject({ tenant: 'acme', last_id: rows[39].id, hash: rows[39].hash });
    expect(await verify([])).toEqual({ line: 'ok 40 rows', code: 0 });
    expect(await verify(['--checkpoint-key', keyFile], { KEY_ENCRYPTION_KEY: undefined })).toEqual({ line: 'ok 40 rows', code: 0 });
    // No key at all (no KEK, no file): signed heads are not skipped, the check refuses.
    const none = await verify([], { KEY_ENCRYPTION_KEY: undefined });
    expect(none.code).toBe(2);
    expect(none.line).toMatch(/^refused: 2 signed audit heads need the checkpoint key/);
  });

  it('name a middle row rewritten with every later hash and the head recomputed, in the database and in an export', async () => {
    await tampered(async () => {
      await rewriteAndRechain(30);
      // Without signed heads the chain holds together: what the audit found.
      await db.pool.query(`CREATE TABLE hidden AS SELECT * FROM audit_checkpoints; DELETE FROM audit_checkpoints`);
      expect(await verify([])).toEqual({ line: 'ok 40 rows', code: 0 });
      await db.pool.query(`INSERT INTO audit_checkpoints SELECT * FROM hidden; DROP TABLE hidden`);
      // With them: the first row after the newest head that still holds, and the head that fails.
      const named = { line: `tampered: row ${rows[20].id} (signed head ${checkpoints[1].id})`, code: 1 };
      expect(await verify([])).toEqual(named);
      expect(await verify(['--checkpoint-key', keyFile], { KEY_ENCRYPTION_KEY: undefined })).toEqual(named);
      expect(await checkExport(await exportText(), signer.publicJwk)).toEqual({ ok: false, id: rows[20].id, what: `signed head ${checkpoints[1].id}` });
    });
    await tampered(async () => {
      await rewriteAndRechain(5);
      expect(await verify([])).toEqual({ line: `tampered: row ${rows[0].id} (signed head ${checkpoints[0].id})`, code: 1 });
    });
    expect(await verify([])).toEqual({ line: 'ok 40 rows', code: 0 });
  });

  it('a key the writer adds to signing_keys, and heads re-signed with it, do not help', async () => {
    await tampered(async () => {
      await rewriteAndRechain(30);
      const { publicKey, privateKey } = await generateKeyPair('Ed25519', { extractable: true });
      const pub = { ...(await exportJWK(publicKey)), kid: 'writer', alg: 'Ed25519', use: 'sig' };
      await db.pool.query(`INSERT INTO signing_keys (kid, alg, public_jwk, private_jwk) VALUES ('writer', 'ES256', $1, $2)`, [pub, await exportJWK(privateKey)]);
      const head = (await chain())[39];
      const forged = await new CompactSign(new TextEncoder().encode(JSON.stringify({ tenant: 'acme', last_id: head.id, hash: head.hash, iat: 1 })))
        .setProtectedHeader({ alg: 'Ed25519', kid: 'writer', typ: 'airlock-audit-checkpoint' })
        .sign(privateKey);
      await db.pool.query(`UPDATE audit_checkpoints SET hash = $2, jws = $3 WHERE id = $1`, [checkpoints[1].id, head.hash, forged]);
      const named = { line: `tampered: row ${head.id} (signed head ${checkpoints[1].id}: not signed by the checkpoint key)`, code: 1 };
      expect(await verify([])).toEqual(named);
      expect(await checkExport(await exportText(), signer.publicJwk)).toMatchObject({ ok: false, what: `signed head ${checkpoints[1].id}: not signed by the checkpoint key` });
    });
  });
});

describe('checkpoints outside the database', () => {
  it('are signed every AUDIT_CHECKPOINT_S', async () => {
    const app = Fastify();
    const config = testConfig({ AUDIT_CHECKPOINT_S: '1', KEY_ENCRYPTION_KEY: KEK });
    const started = await startAuditCheckpoints(app, { config, pool: db.pool, outbox: false });
    expect(started.signer.publicJwk).toEqual(signer.publicJwk); // the same KEK, the same key: nothing stored
    const [added] = await appendAudit(db.pool, [entry(99)]);
    await expect.poll(async () => (await db.pool.query(`SELECT count(*)::int AS n FROM audit_checkpoints WHERE last_id = $1`, [added.id])).rows[0].n, { timeout: 10_000 }).toBe(1);
    await app.close();
  });

  it('go to the webhook endpoints that name audit.checkpoint, and only to them', async () => {
    const received: Array<{ url: string; body: { type: string; checkpoint: { jws: string; last_id: string } } }> = [];
    const server: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ url: req.url!, body: JSON.parse(body) });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const endpoints = [
      { url: `${base}/named`, secret: 'webhook-secret-0123456789', format: 'json' as const, events: ['audit.checkpoint' as const] },
      { url: `${base}/all`, secret: 'webhook-secret-0123456789', format: 'json' as const },
      { url: `${base}/approvals`, secret: 'webhook-secret-0123456789', format: 'json' as const, events: ['approval.requested' as const] },
    ];
    const [added] = await appendAudit(db.pool, [entry(100)]);
    const [signed] = await signHeads(db.pool, signer, true);
    const stop = startWebhookDelivery({ pool: db.pool, endpoints, publicUrl: undefined, log: { warn: () => {}, info: () => {} } });
    try {
      await expect.poll(() => received.length, { timeout: 15_000 }).toBe(1);
      const { rows: deliveries } = await db.pool.query(`SELECT url FROM approval_webhook_deliveries`);
      expect(deliveries.map((d) => d.url)).toEqual([`${base}/named`]);
    } finally {
      await stop();
      server.close();
    }
    expect(received[0]).toMatchObject({ url: '/named', body: { type: 'audit.checkpoint', checkpoint: { id: signed.id, last_id: added.id } } });
    expect(await verifyCheckpoint(received[0].body.checkpoint.jws, signer.publicJwk)).toMatchObject({ last_id: added.id });
  });
});
