/**
 * Agent and api agree on every operation: each catalog entry is a route of the real api with the
 * declared method, and the agent's tools call exactly those (method and path from the same entry).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { TOOLS, toolPath } from '../../server/operations/index.ts';

let db: TestDatabase;
let server: TestServer;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, roles: ['api'] });
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe('operations catalog vs the api', () => {
  it.each(TOOLS.map((t) => [t.name, t] as const))('%s is served at its declared method and path', (_name, spec) => {
    // hasRoute matches the route as declared (with its `:id` segment), not a request URL.
    expect(server.app.hasRoute({ method: spec.method, url: `/api/tools${spec.path}` })).toBe(true);
  });

  it('a tool endpoint refuses a call without the service token (the route is a real tool route)', async () => {
    for (const spec of TOOLS) {
      const res = await fetch(`${server.url}${toolPath(spec, { id: 'x' })}`, { method: spec.method, headers: { 'content-type': 'application/json' }, body: spec.method === 'POST' ? '{}' : undefined });
      expect([spec.name, res.status]).toEqual([spec.name, 401]);
    }
  });
});
