/**
 * Issue 36 item 8: a v1 stream whose run cannot reach the database any more because the pool gives
 * no connection in time (pg-pool's "timeout exceeded when trying to connect", which
 * db/unavailable.ts classifies as unavailable) ends with SERVICE_UNAVAILABLE (retryable), as every
 * other route answers it, never INTERNAL. The real server on the real database; its pool is the
 * test's, wrapped so that from the moment the model is asked (model-gate.ts holds it: no timing),
 * reading a run back (getAgentRun: the stream's own reads once its turn has ended, while the turn
 * itself writes as usual) fails as pg-pool fails when no connection comes in time. (A turn whose
 * own writes fail this way already ends SERVICE_UNAVAILABLE: engine/turn-errors.ts.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pool } from '../../server/db/index.ts';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startModelGate, type ModelGate } from '../helpers/model-gate.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { streamCompletion } from './v1-support.ts';

let db: TestDatabase;
let gate: ModelGate;
let server: TestServer;
let token: string;
/** While true, reading a run back gets no connection (as pg-pool says when its wait times out). */
let exhausted = false;

const RUN_READ = /FROM agent_runs a\b[\s\S]*WHERE a\.id = \$1$/;

/** The pool as the server sees it: the real one, but a run read fails with pg-pool's acquire timeout while `exhausted`. */
function exhaustible(pool: Pool): Pool {
  return new Proxy(pool, {
    get(target, prop) {
      if (prop === 'query') {
        return (text: unknown, ...rest: unknown[]) =>
          exhausted && typeof text === 'string' && RUN_READ.test(text)
            ? Promise.reject(new Error('timeout exceeded when trying to connect'))
            : (target.query as (...a: unknown[]) => unknown)(text, ...rest);
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
  gate = await startModelGate();
  server = await startTestServer({ db: { ...db, pool: exhaustible(db.pool) }, env: { OPENAI_BASE_URL: gate.url, OPENAI_API_KEY: 'offline', OPENAI_MAX_RETRIES: '0' } });
  token = await login(server.url, 'admin');
});

afterAll(async () => {
  exhausted = false;
  await server?.close();
  await gate?.close();
  await db?.drop();
});

it('a pool-acquire timeout ends the stream with SERVICE_UNAVAILABLE (retryable), not INTERNAL', async () => {
  const asked = gate.hold();
  const stream = streamCompletion(server.url, token, { messages: [{ role: 'user', content: 'hello' }] });
  await asked;
  exhausted = true;
  gate.release();
  const { status, frames } = await stream;
  exhausted = false;
  expect(status).toBe(200);
  const errors = frames.filter((f) => f.event === 'error');
  expect(errors.map((f) => f.data.error?.code)).toEqual(['SERVICE_UNAVAILABLE']);
  expect(errors[0].data.metadata).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  expect(frames.at(-1)).toEqual({ event: 'done', data: '[DONE]' });
});
