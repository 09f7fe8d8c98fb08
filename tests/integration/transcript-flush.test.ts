/**
 * The answer's periodic write is off the token path (issue 15): with the messages table locked
 * by another session, tokens still go through at once; ending the segment waits for the write
 * in flight and then updates that same row (one answer row, the whole text), never a second one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createConversation } from '../../server/db/conversations.ts';
import { Transcript } from '../../server/engine/transcript.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
let conversationId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const { rows } = await db.pool.query<{ id: string }>(`INSERT INTO users (username, password_hash, role) VALUES ('writer', 'x', 'viewer') RETURNING id`);
  conversationId = (await createConversation(db.pool, { userId: rows[0].id, text: 'hi' })).id;
});
afterAll(async () => db?.drop());

describe('Transcript answer writes', () => {
  it('a token never waits for the database; the segment end writes one row with the whole text', async () => {
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE messages IN ACCESS EXCLUSIVE MODE');
    const transcript = new Transcript(db.pool, conversationId);

    const started = performance.now();
    transcript.token('Hello'); // starts the first write, which now blocks on the lock
    for (const word of [', ', 'world', '!']) transcript.token(word);
    expect(performance.now() - started).toBeLessThan(50);
    expect(transcript.answerText).toBe('Hello, world!');

    let ended = false;
    const end = transcript.endAnswer().then(() => (ended = true));
    await new Promise((r) => setTimeout(r, 200));
    expect(ended).toBe(false); // waits for the write in flight
    await locker.query('COMMIT');
    await end;
    await locker.end();

    const { rows } = await db.pool.query<{ content: string }>(`SELECT content FROM messages WHERE conversation_id = $1 AND role = 'assistant'`, [conversationId]);
    expect(rows).toEqual([{ content: 'Hello, world!' }]);
  });
});
