/**
 * The real process: `server/main.ts` starts the roles, prints its URL, and on SIGTERM ends open
 * streams with a terminal message, closes the pool and exits 0.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startMain as startProcess } from '../helpers/main-process.ts';

let db: TestDatabase;
let dataDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'airlock-main-'));
  await chmod(dataDir, 0o755); // as root, embedded PostgreSQL runs as an unprivileged user
});
afterAll(async () => {
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const startMain = (args: string[], env: Record<string, string>) => startProcess(args, { DATA_DIR: dataDir, ...env });

describe('server/main.ts', () => {
  it('rejects an unknown role and a split start without a service secret, with a clear message', async () => {
    const bad = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--role', 'nope'], { env: { ...process.env, DATABASE_URL: db.url } });
    let err = '';
    bad.stderr.on('data', (c) => (err += c));
    expect(await new Promise((r) => bad.once('exit', r))).toBe(1);
    expect(err).toContain('Unknown role "nope"');

    const split = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--role', 'api'], {
      env: { ...process.env, DATABASE_URL: db.url, SERVICE_CLIENT_SECRET: '' },
    });
    let splitErr = '';
    split.stderr.on('data', (c) => (splitErr += c));
    expect(await new Promise((r) => split.once('exit', r))).toBe(1);
    expect(splitErr).toMatch(/SERVICE_CLIENT_SECRET/);
  });

  it('on SIGTERM ends an open /chat stream with a terminal message and exits 0', async () => {
    const main = await startMain([], { DATABASE_URL: db.url, OFFLINE_MODEL_DELAY_MS: '150', SHUTDOWN_GRACE_MS: '300' });
    const client = await connectChat(main.url, await login(main.url, 'admin'));
    const stages: string[] = [];
    let tokens = 0;
    const submission = chat(client, 'tell me about yourself and what you can help me with today in detail');
    for await (const event of submission) {
      if (event.type === 'data') {
        if (++tokens === 2) main.child.kill('SIGTERM');
      } else if (event.type === 'status') stages.push(event.stage);
    }
    expect(['complete', 'error']).toContain(stages.at(-1)); // the iterator ended: a terminal message arrived
    expect(await main.exited).toBe(0);
    client.close();
  });

  it('starts on embedded defaults (no DATABASE_URL) and stops its PostgreSQL on SIGTERM', async () => {
    const env = { ...process.env };
    delete env.DATABASE_URL;
    const main = await startMain([], { ...(env as Record<string, string>), DATABASE_URL: '' });
    expect(main.output()).toMatch(/Airlock \(web, api, gateway\) is ready at http:\/\/127\.0\.0\.1:\d+/);
    const token = await login(main.url, 'operator');
    const me = await fetch(`${main.url}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(await me.json()).toMatchObject({ username: 'operator', role: 'operator' });
    main.child.kill('SIGTERM');
    expect(await main.exited).toBe(0);
  });

  it('serves one role alone (--role api)', async () => {
    const main = await startMain(['--role', 'api'], { DATABASE_URL: db.url, SERVICE_CLIENT_SECRET: 'split-secret-0123456789abcdef' });
    expect(main.output()).toContain('Airlock (api) is ready');
    expect((await fetch(`${main.url}/api/auth/jwks.json`)).status).toBe(200);
    expect((await fetch(`${main.url}/api/agent/gradio/config`)).status).toBe(404);
    main.child.kill('SIGINT');
    expect(await main.exited).toBe(0);
  });
});
