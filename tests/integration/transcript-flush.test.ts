/**
 * The answer's periodic write is off the token path (issue 15): with the messages table locked
 * by another session, tokens still go through at once; ending the segment waits for the write
 * in flight and then updates that same row (one answer row, the whole text), never a second one.
 * A commit that ends the answer and then fails (a connection lost mid-transaction, issue 30) leaves
 * the answer in memory for the error path to write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createConversation } from '../../server/db/conversations.ts';
import { withTransaction } from '../../server/db/index.ts';
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

  it('a commit that ended the answer and then failed rolls the segment back too: the error path writes it whole, in its row', async () => {
    const { rows: users } = await db.pool.query<{ id: string }>(`SELECT id FROM users WHERE username = 'writer'`);
    const conversation = (await createConversation(db.pool, { userId: users[0].id, text: 'again' })).id;
    const transcript = new Transcript(db.pool, conversation);
    transcript.token('The answer'); // its first write gives the segment a row
    transcript.token(' so far');
    const lost = new Error('Connection terminated unexpectedly');
    const commit = transcript.atomically(() =>
      withTransaction(db.pool, async (tx) => {
        await transcript.endAnswer({}, tx);
        throw lost; // as the ledger's insert would, with its connection gone
      }),
    );
    await expect(commit).rejects.toBe(lost);
    expect(transcript.answerText).toBe('The answer so far');

    await transcript.endAnswer({ error: { code: 'SERVICE_UNAVAILABLE' } });
    const { rows } = await db.pool.query<{ content: string; error: unknown }>(
      `SELECT content, metadata->'error' AS error FROM messages WHERE conversation_id = $1 AND role = 'assistant'`,
      [conversation],
    );
    expect(rows).toEqual([{ content: 'The answer so far', error: { code: 'SERVICE_UNAVAILABLE' } }]);
  });
});
