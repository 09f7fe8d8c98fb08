/**
 * Issue 30 finding 16: failed logins could lock people out for minutes.
 * - A guesser of `admin` spread over addresses held the real admin out for up to 5 min.
 * - 30 failures from one address held out everyone behind it (a NAT, an office) for up to 5 min.
 * Now a failure delays by capped backoff: 429 RATE_LIMITED with `Retry-After` ≤ 30 s (no
 * server-side sleep), on the REST login and Gradio's /login alike, and the per-address limit
 * counts failures only. A persistent guesser is simulated by the failures already counted in
 * `login_attempts` (reaching them for real takes the very minutes of delay this caps).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../server/auth/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const PASSWORD = 'demo-password-1';
let db: TestDatabase;
let server: TestServer;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db });
  const hash = await hashPassword(PASSWORD);
  await db.pool.query(`INSERT INTO users (username, password_hash, role, tenant) SELECT 'office-' || i, $1, 'viewer', 'demo' FROM generate_series(1, 3) AS i`, [hash]);
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

async function login(username: string, password: string, address: string) {
  const res = await fetch(`${server.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
    body: JSON.stringify({ username, password }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
}

/** The counter of `key` as a guesser who kept going would have left it (no delay pending yet). */
async function persistentGuesser(key: string, failures: number): Promise<void> {
  await db.pool.query(
    `INSERT INTO login_attempts (key, failures, first_failure_at, locked_until) VALUES ($1, $2, now(), NULL)
     ON CONFLICT (key) DO UPDATE SET failures = $2, first_failure_at = now(), locked_until = NULL`,
    [key, failures],
  );
}

/** Time passes: every pending delay is over. */
const delaysPass = () => db.pool.query('UPDATE login_attempts SET locked_until = now() - interval \'1 second\'');

function expectDelayed(reply: { status: number; retryAfter: string | null; body: any }): void {
  expect(reply.status).toBe(429);
  expect(reply.body.error.code).toBe('RATE_LIMITED');
  const wait = Number(reply.retryAfter);
  expect(wait).toBeGreaterThan(0);
  expect(wait).toBeLessThanOrEqual(30);
}

describe('failed logins delay with capped backoff (issue 30 finding 16)', () => {
  it('guesses for admin from 5 addresses delay the real admin by at most 30 s, never lock them out', async () => {
    // 20 real guesses from 5 addresses (4 each: no pair is slowed), then the username is.
    for (let a = 1; a <= 5; a++) for (let i = 0; i < 4; i++) expect((await login('admin', `guess-${a}-${i}`, `192.0.2.${a}`)).status).toBe(401);
    expectDelayed(await login('admin', PASSWORD, '198.51.100.1'));
    // The guesser keeps going for a long time (40 failures on the username), one more guess.
    await persistentGuesser('user:admin', 39);
    await delaysPass();
    expect((await login('admin', 'guess-last', '192.0.2.6')).status).toBe(401);
    const real = await login('admin', PASSWORD, '198.51.100.1');
    expectDelayed(real);
    // Once that delay is over, the real admin is in (and their success clears the username).
    await delaysPass();
    expect((await login('admin', PASSWORD, '198.51.100.1')).status).toBe(200);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM login_attempts WHERE key = 'user:admin'`)).rows[0].n).toBe(0);
  });

  it('a spraying address delays the others behind it by at most 30 s', async () => {
    const office = '203.0.113.9';
    await persistentGuesser(`addr:${office}`, 39);
    expect((await login('nobody-here', 'guess', office)).status).toBe(401);
    expectDelayed(await login('office-1', PASSWORD, office));
    // The Gradio clients' /login answers the same delay with its Retry-After.
    const gradio = await fetch(`${server.url}/api/agent/gradio/login`, {
      method: 'POST',
      headers: { 'x-forwarded-for': office },
      body: new URLSearchParams({ username: 'office-2', password: PASSWORD }),
    });
    expect(gradio.status).toBe(429);
    expect(Number(gradio.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(gradio.headers.get('retry-after'))).toBeLessThanOrEqual(30);
    await delaysPass();
    expect((await login('office-1', PASSWORD, office)).status).toBe(200);
  });

  it('the per-address limit counts failures only: many sign-ins behind one address never slow it', async () => {
    const nat = '203.0.113.77';
    for (let i = 0; i < 35; i++) expect((await login(`office-${(i % 3) + 1}`, PASSWORD, nat)).status).toBe(200);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM login_attempts WHERE key = $1`, [`addr:${nat}`])).rows[0].n).toBe(0);
  });
});
