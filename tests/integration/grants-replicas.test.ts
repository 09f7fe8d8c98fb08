/**
 * Standing grants across replicas (issue 27 item 2): two real gateway processes on one
 * PostgreSQL (tests/helpers/cluster.ts), each addressed directly. A grant made on one replica lets
 * a matching call on the other run without a card; revoked on one, the very next call on the other
 * asks (the revocation committed before the call: the grant is read and counted in one statement
 * per call, nothing is cached); expired 1 ms before the call, it asks too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { v1, waitForRun } from './v1-support.ts';

let db: TestDatabase;
let cluster: Cluster;
let token: string;

beforeAll(async () => {
  db = await createTestDatabase();
  cluster = await startCluster({ replicas: 2, databaseUrl: db.url, env: { OFFLINE_MODEL_DELAY_MS: '1', LOG_LEVEL: 'warn' } });
  token = await login(cluster.url, 'admin');
});
afterAll(async () => {
  await cluster?.stop();
  await db?.drop();
});

const [A, B] = [0, 1];
const at = (replica: number) => cluster.replicas[replica].url;

/** A staging deploy started on `replica`, to completed or paused. */
async function deployOn(replica: number, version: string) {
  const started = await v1(at(replica), '/runs', { token, body: { messages: [{ role: 'user', content: `deploy payments-api ${version} to staging` }] } });
  expect(started.status).toBe(202);
  return waitForRun(at(replica), token, started.body.run_id, (r) => r.status === 'completed' || r.status === 'awaiting_approval');
}

const grantOn = async (replica: number, ttl = 3600) => {
  const made = await v1(at(replica), '/grants', { token, body: { tool: 'deploy_service', match: { environment: 'staging' }, ttl_s: ttl } });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return made.body.id as string;
};

describe('grants on two replicas', () => {
  it('made on A, used on B; revoked on A, the very next call on B asks', async () => {
    const id = await grantOn(A);
    const granted = await deployOn(B, '9.0.1');
    expect(granted.status).toBe('completed');
    expect(granted.approval_request_ids).toEqual([]);
    const { rows } = await db.pool.query(`SELECT payload->>'grant_id' AS grant_id FROM conversation_events WHERE kind = 'tool.call' AND payload->'input'->>'version' = '9.0.1'`);
    expect(rows).toEqual([{ grant_id: id }]);

    // Revoked on A (the 200 means committed); the next call, on B, a moment later, asks.
    expect((await v1(at(A), `/grants/${id}`, { token, method: 'DELETE' })).status).toBe(200);
    const after = await deployOn(B, '9.0.2');
    expect(after.status).toBe('awaiting_approval');
    expect((await db.pool.query(`SELECT uses FROM approval_grants WHERE id = $1`, [id])).rows[0].uses).toBe(1);
  });

  it('revoked 1 ms before the call, or expired 1 ms before it, the call asks; a live twin of the same grant runs', async () => {
    const revoked = await grantOn(B);
    await db.pool.query(`UPDATE approval_grants SET revoked_at = clock_timestamp() - interval '1 millisecond' WHERE id = $1`, [revoked]);
    expect((await deployOn(A, '9.1.1')).status).toBe('awaiting_approval');

    const expired = await grantOn(B);
    await db.pool.query(`UPDATE approval_grants SET expires_at = clock_timestamp() - interval '1 millisecond' WHERE id = $1`, [expired]);
    expect((await deployOn(A, '9.1.2')).status).toBe('awaiting_approval');
    expect((await db.pool.query(`SELECT sum(uses)::int AS n FROM approval_grants WHERE id IN ($1, $2)`, [revoked, expired])).rows[0].n).toBe(0);

    // The control: the same grant, live, on the other replica, runs the same call.
    const live = await grantOn(B);
    expect((await deployOn(A, '9.1.3')).status).toBe('completed');
    expect((await db.pool.query(`SELECT uses FROM approval_grants WHERE id = $1`, [live])).rows[0].uses).toBe(1);
  });
});
