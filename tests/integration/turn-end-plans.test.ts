/**
 * What a turn's end asks the database stays cheap however many runs it has seen (issue 38): the
 * statements nameAfterFirstAnswer sends in every end commit are planned without a sequential scan
 * of runs (migration 250). Without the index the first-answer check read every run of every
 * conversation, and the end commit of each turn grew with the table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nameAfterFirstAnswer } from '../../server/engine/first-title.ts';
import type { Queryable } from '../../server/db/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** A Queryable that records every statement (text and values) it passes on. */
function recording(q: Queryable): { q: Queryable; sent: Array<{ text: string; values: unknown[] }> } {
  const sent: Array<{ text: string; values: unknown[] }> = [];
  return { sent, q: { query: ((text: string, values: unknown[] = []) => (sent.push({ text, values }), q.query(text, values))) as Queryable['query'] } };
}

describe("a turn's end with many runs in the database", () => {
  it('names a first answer without scanning every run', async () => {
    const q = (text: string, values: unknown[] = []) => db.pool.query(text, values);
    const user = (await q(`INSERT INTO users (username, password_hash, role) VALUES ('many-runs', 'x', 'viewer') RETURNING id`)).rows[0].id;
    await q(`INSERT INTO conversations (id, user_id, title) SELECT gen_random_uuid(), $1, 'old' FROM generate_series(1, 5000)`, [user]);
    await q(`INSERT INTO runs (conversation_id, user_id, request_id, request_hash, owner, status, lease_expires_at)
             SELECT id, $1::text, gen_random_uuid()::text, 'h', 'o', 'done', now() FROM conversations WHERE user_id = $1::uuid`, [user]);
    const id = (await q(`INSERT INTO conversations (id, user_id, title, title_auto) VALUES (gen_random_uuid(), $1, 'New conversation', true) RETURNING id`, [user])).rows[0].id;
    const run = (await q(`INSERT INTO runs (conversation_id, user_id, request_id, request_hash, owner, lease_expires_at) VALUES ($1, $2, 'r', 'h', 'o', now()) RETURNING id`, [id, user])).rows[0].id;
    await q(`INSERT INTO messages (conversation_id, role, content) VALUES ($1, 'user', 'check the health of all services')`, [id]);
    await q('ANALYZE runs');

    const { q: recorded, sent } = recording(db.pool);
    const named = await nameAfterFirstAnswer(recorded, { conversationId: id, runId: run, answer: 'All services are healthy.' });
    expect(named?.title).toBeTruthy(); // the first answer did name it
    expect(sent.length).toBeGreaterThan(0);
    for (const { text, values } of sent) {
      const { rows } = await q(`EXPLAIN ${text}`, values);
      const plan = rows.map((r) => r['QUERY PLAN'] as string).join('\n');
      expect(plan, text).not.toMatch(/Seq Scan on runs/);
    }
  });
});
