/**
 * Issue 30, finding 15, performed: `GET /api/agent/tools/servers` answered anyone (also through
 * nginx) with the tools file's absolute path, every server's name and its last error. Now: no
 * token 401, a viewer's or operator's 403, the admin's 200 with the file by name only and no
 * absolute path anywhere (a stdio server whose command is an absolute path that does not exist).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let db: TestDatabase;
let server: TestServer;
let dir: string;
const COMMAND = '/nonexistent-airlock/secret-dir/bin/tool-server';

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'airlock-mcp-status-'));
  const toolsFile = join(dir, 'tools.yaml');
  await writeFile(toolsFile, ['servers:', '  - name: missing', `    command: ${COMMAND}`, `    cwd: ${dir}`, ''].join('\n'));
  server = await startTestServer({ db, env: { TOOLS_FILE: toolsFile } });
});
afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
});

describe('the tools status route', () => {
  const get = (token?: string) => fetch(`${server.url}/api/agent/tools/servers`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

  it('refuses a caller with no token (401) and any role but admin (403)', async () => {
    expect((await get()).status).toBe(401);
    expect((await get('not-a-token')).status).toBe(401);
    expect((await get(await login(server.url, 'viewer'))).status).toBe(403);
    expect((await get(await login(server.url, 'operator'))).status).toBe(403);
  });

  it('shows the admin the servers with no absolute path', async () => {
    const res = await get(await login(server.url, 'admin'));
    expect(res.status).toBe(200);
    const text = await res.text();
    const body = JSON.parse(text);
    expect(body.file).toBe('tools.yaml');
    expect(body.servers.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([['missing', 'down']]);
    expect(text).not.toContain(dir);
    expect(text).not.toContain('/nonexistent-airlock');
    expect(text).not.toContain(tmpdir());
  });
});
