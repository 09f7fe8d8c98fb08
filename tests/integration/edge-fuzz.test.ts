/**
 * Issue 9, proof: a property-based fuzz (fast-check) of every REST and Gradio route's inputs over
 * real HTTP against the real app (api + gateway roles, real PostgreSQL). Paths, query strings,
 * bodies, content types and credentials are generated, biased toward what broke before (dates that
 * do not exist, numbers past bigint, NUL, deep nesting, path tricks). No answer may be a 5xx and
 * none may hang (headers within 5 s). Prints the request and 5xx counts (the audit's: 594 -> 8).
 */
import fc from 'fast-check';
import { encodeCursor } from '../../server/api/cursor.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { httpFrom } from '../helpers/http-from.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { FUZZ_ROUTES, type FuzzRoute } from './edge-fuzz-routes.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);

let db: TestDatabase;
let server: TestServer;
const creds: Record<string, string> = {};
let conversationId = '';
beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, roles: ['api', 'gateway'] });
  const post = async (path: string, json: unknown, headers: Record<string, string> = {}) =>
    (await httpFrom('127.0.0.1', server.url + path, { method: 'POST', json, headers })).json();
  creds.user = (await post('/api/auth/login', { username: 'admin', password: 'demo-password-1' })).access_token;
  creds.service = (await post('/api/auth/service-token', { client_id: 'airlock-gateway', client_secret: 'test-service-secret-0123456789' })).access_token;
  conversationId = (await post('/api/assistant/conversations', { title: 'fuzz' }, { authorization: `Bearer ${creds.user}` })).id;
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

const deep = (d: number) => '['.repeat(d) + ']'.repeat(d);

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
/** Date-times near and past the calendar's edges (Feb 30, month 13, hour 24, year 0). */
const dateTime = fc
  .tuple(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }), fc.integer({ min: 0, max: 25 }), fc.constantFrom('Z', '+01:00', '+99:00', ''), fc.constantFrom('T', ' '))
  .map(([y, m, d, h, tz, sep]) => `${pad(y, 4)}-${pad(m)}-${pad(d)}${sep}${pad(h)}:00:00${tz}`);

/** Strings that broke servers before, plus anything. */
const scalar = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
  { weight: 1, arbitrary: fc.uuid() },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '', '\u0000', 'a\u0000b', 'null', '-1', '0', '1.5', '1e309', '9223372036854775808', '99999999999999999999999',
      '2026-02-31T00:00:00Z', '0000-01-01T00:00:00Z', '2026-13-01', 'NaN', '../../etc/passwd', '/etc/passwd', '%00',
      '<script>alert(1)</script>', "'; DROP TABLE users; --", '00000000-0000-0000-0000-000000000000', 'x'.repeat(5000),
      'confirm', 'deny', 'eyJhbGciOiJub25lIn0.e30.', '\u202e\u0000', '{"u":"x"}',
    ),
  },
  { weight: 2, arbitrary: fc.constantFrom('{conv}') },
  { weight: 2, arbitrary: dateTime },
);
/** Opaque cursors that decode to well-formed JSON with bad values (what a tampering client sends). */
const numeric = fc.oneof(scalar, fc.double().map(String), fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String));
const cursor = fc
  .oneof(
    { weight: 3, arbitrary: fc.record({ u: fc.oneof(dateTime, scalar), i: fc.uuid({ version: 4 }), r: numeric }, { requiredKeys: ['u', 'i'] }) },
    { weight: 2, arbitrary: fc.record({ s: numeric }) },
    { weight: 2, arbitrary: fc.record({ b: numeric }) },
    { weight: 1, arbitrary: fc.record({ u: scalar, i: scalar, r: scalar, s: scalar, b: scalar }, { requiredKeys: [] }) },
  )
  .map(encodeCursor);
const nasty = fc.oneof({ weight: 8, arbitrary: scalar }, { weight: 1, arbitrary: cursor });

/** Field-aware values: what a field is parsed as gets the inputs most likely to break that parse. */
const BY_FIELD: Record<string, fc.Arbitrary<unknown>> = {
  cursor,
  before: cursor,
  since: dateTime,
  until: dateTime,
  limit: numeric,
  conversation_id: fc.constantFrom('{conv}'),
  metadata: fc.integer({ min: 60, max: 6000 }).map((d) => ({ deep: `__DEEP_${d}__` })),
};
const forField = (key: string) => (Object.hasOwn(BY_FIELD, key) ? fc.oneof({ weight: 5, arbitrary: BY_FIELD[key] }, { weight: 1, arbitrary: nasty }) : nasty);

const json = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: nasty },
  { weight: 1, arbitrary: fc.array(nasty, { maxLength: 6 }) },
  // Deep nesting is spliced in as text at send time (fast-check's own printer would overflow).
  { weight: 1, arbitrary: fc.integer({ min: 60, max: 6000 }).map((d) => `__DEEP_${d}__`) },
);

interface FuzzRequest {
  route: FuzzRoute;
  params: string[];
  query: [string, string][];
  body: { kind: 'object'; value: Record<string, unknown> } | { kind: 'json'; value: unknown } | { kind: 'raw'; value: string } | { kind: 'none' };
  contentType: string | null;
  auth: 'valid' | 'none' | 'garbage';
}

const requestArb: fc.Arbitrary<FuzzRequest> = fc.constantFrom(...FUZZ_ROUTES).chain((route) =>
  fc.record({
    route: fc.constant(route),
    params: fc.array(nasty, { minLength: route.params, maxLength: route.params }),
    query: fc
      .uniqueArray(fc.constantFrom(...route.query, 'x'), { maxLength: 4 })
      .chain((keys) => fc.tuple(...keys.map((k) => forField(k).map((v) => [k, String(v)] as [string, string])))),
    body: fc.oneof(
      { weight: 4, arbitrary: fc
          .uniqueArray(fc.constantFrom(...route.body, 'x', '__proto__'), { maxLength: 6 })
          .chain((keys) => fc.tuple(...keys.map((k) => fc.oneof(forField(k), json).map((v) => [k, v] as const))))
          .map((entries) => ({ kind: 'object' as const, value: Object.fromEntries(entries) })) },
      { weight: 1, arbitrary: json.map((value) => ({ kind: 'json' as const, value })) },
      { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 60 }), fc.integer({ min: 1000, max: 20000 }).map(deep)).map((value) => ({ kind: 'raw' as const, value })) },
      { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
    ),
    contentType: fc.constantFrom('application/json', 'application/json', 'text/plain', 'multipart/form-data; boundary=zz', 'application/x-www-form-urlencoded', null),
    auth: fc.constantFrom('valid', 'valid', 'valid', 'valid', 'valid', 'valid', 'none', 'garbage'),
  }),
);

function toHttp(req: FuzzRequest) {
  const fill = (v: string) => encodeURIComponent(v === '{conv}' ? conversationId : v);
  let i = 0;
  const path = req.route.path.replace(/:[a-z_]+|\*/g, () => fill(req.params[i++] ?? ''));
  const qs = req.query.map(([k, v]) => `${encodeURIComponent(k)}=${fill(v)}`).join('&');
  const headers: Record<string, string> = {};
  const user = req.auth === 'valid' ? creds.user : req.auth === 'garbage' ? 'garbage.token.here' : undefined;
  if (req.route.auth === 'tool') {
    if (user) headers['x-user-jwt'] = user;
    if (req.auth !== 'none') headers.authorization = `Bearer ${req.auth === 'valid' ? creds.service : 'x.y.z'}`;
  } else if (user) headers.authorization = `Bearer ${user}`;
  let body: string | undefined;
  if (req.route.method !== 'GET' && req.body.kind !== 'none') {
    body = req.body.kind === 'raw' ? req.body.value : (JSON.stringify(req.body.value) ?? 'null').replace(/"__DEEP_(\d+)__"/g, (_, d) => deep(Number(d)));
    if (req.contentType) headers['content-type'] = req.contentType;
  }
  return { url: `${server.url}${path}${qs ? `?${qs}` : ''}`, method: req.route.method, headers, body };
}

describe('fuzz: REST and Gradio routes never answer 5xx nor hang', () => {
  it(`holds for ${RUNS} generated requests`, { timeout: 600_000 }, async () => {
    let count = 0;
    const failures: string[] = [];
    await fc.assert(
      fc.asyncProperty(requestArb, async (req) => {
        const http = toHttp(req);
        count++;
        try {
          const res = await httpFrom('127.0.0.1', http.url, { method: http.method, headers: http.headers, body: http.body, headersOnly: true, timeoutMs: 5000 });
          if (res.status >= 500) failures.push(`${res.status} ${http.method} ${http.url.slice(0, 200)} body=${String(http.body).slice(0, 200)}`);
        } catch (error) {
          failures.push(`HANG/ERROR ${http.method} ${http.url.slice(0, 200)}: ${(error as Error).message}`);
        }
      }),
      { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? 20261203) },
    );
    process.stdout.write(`fuzz: ${count} requests over ${FUZZ_ROUTES.length} routes, ${failures.length} x 5xx or hang\n`);
    for (const f of failures.slice(0, 20)) process.stdout.write(`  ${f}\n`);
    expect(failures).toEqual([]);
  });
});
