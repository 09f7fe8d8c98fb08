/**
 * The checkpointer's pool parses bytea[] with the fast parser (server/db/bytea-array.ts): what
 * real PostgreSQL prints, in either bytea output, and a real LangGraph thread's checkpoint (values
 * with quotes, backslashes, NUL and non-ASCII text, and an interrupt's pending writes) read back
 * through it equal what node-pg's default parser gives.
 */
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { Annotation, interrupt, MessagesAnnotation, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckpointer } from '../../server/agent/checkpointer.ts';
import { fastByteaArrayTypes, parseHexByteaArray } from '../../server/db/bytea-array.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
let fastPool: pg.Pool;
let plainPool: pg.Pool;
let rawPool: pg.Pool; // the text PostgreSQL sent, unparsed

beforeAll(async () => {
  db = await createTestDatabase();
  fastPool = new pg.Pool({ connectionString: db.url, max: 2, types: fastByteaArrayTypes });
  plainPool = new pg.Pool({ connectionString: db.url, max: 2 });
  rawPool = new pg.Pool({ connectionString: db.url, max: 2, types: { getTypeParser: () => (text: string) => text } as pg.CustomTypesConfig });
});
afterAll(async () => {
  await fastPool?.end();
  await plainPool?.end();
  await rawPool?.end();
  await db?.drop();
});

const TRICKY = 'quote " backslash \\ brace } comma , NUL \u0000 é 漢字 🚀';
const ARRAYS = `SELECT array_agg(array[name::bytea, convert_to($1::text, 'UTF8'), CASE WHEN n % 3 = 0 THEN NULL ELSE decode(repeat('00ff5c22', n), 'hex') END]) AS a
                  FROM (SELECT n, 'channel-' || n AS name FROM generate_series(1, 40) AS n) AS s`;

describe('bytea[] through the checkpointer pool', () => {
  it.each(['hex', 'escape'])('reads what PostgreSQL prints with bytea_output = %s as the default parser does', async (output) => {
    const read = async (pool: pg.Pool) => {
      const client = await pool.connect();
      try {
        await client.query(`SET bytea_output = ${output}`);
        return (await client.query(ARRAYS, [TRICKY.replace('\u0000', '')])).rows[0].a;
      } finally {
        await client.query('RESET bytea_output');
        client.release();
      }
    };
    const fast = await read(fastPool);
    expect(fast).toHaveLength(40);
    expect(Buffer.isBuffer(fast[0][0])).toBe(true);
    expect(fast).toEqual(await read(plainPool));
    // The fast path itself read the hex output (the escape output went to the default parser).
    expect(parseHexByteaArray(await read(rawPool)) !== undefined).toBe(output === 'hex');
  });

  it("a LangGraph thread's checkpoint and pending writes read back equal through both parsers", async () => {
    const saver = await createCheckpointer(db.pool, db.url);
    const plain = new PostgresSaver(plainPool, undefined, { schema: db.schema });
    const State = Annotation.Root({ ...MessagesAnnotation.spec, note: Annotation<string> });
    const graph = new StateGraph(State)
      .addNode('answer', () => ({ messages: [new AIMessage(TRICKY)], note: TRICKY }))
      .addNode('gate', () => ({ note: String(interrupt({ ask: TRICKY })) }))
      .addEdge('__start__', 'answer')
      .addEdge('answer', 'gate')
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: 'bytea-thread' } };
    await graph.invoke({ messages: [new HumanMessage(TRICKY)] }, config);

    const fast = await saver.getTuple(config);
    const reference = await plain.getTuple(config);
    expect(fast?.checkpoint.channel_values.note).toBe(TRICKY);
    expect((fast?.checkpoint.channel_values.messages as AIMessage[]).map((m) => m.content)).toEqual([TRICKY, TRICKY]);
    expect(fast?.pendingWrites?.some(([, channel]) => channel === '__interrupt__')).toBe(true);
    expect(fast).toEqual(reference);
    await saver.end(); // PostgresSaver.end() ends its pool
  });
});
