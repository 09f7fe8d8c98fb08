/**
 * Issue 9, items 11 and 13, on the real process (`server/main.ts`) behind the real nginx:
 * - with DATABASE_URL set and DEMO_USERS not asked for, no demo users exist and the start says so;
 * - a Gradio session_hash (a capability) never appears in the app's info logs nor in nginx's
 *   access log, whether it came in the query (/queue/data) or the path (/heartbeat).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../server/auth/index.ts';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { httpFrom } from '../helpers/http-from.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { startNginx, type NginxInstance } from '../helpers/nginx.ts';

const SECRET_HASH = 'edgesecrethash0123';

let db: TestDatabase;
let dataDir: string;
let main: MainProcess;
let url: string;
let nginx: NginxInstance;
beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'airlock-edge-logs-'));
  main = await startMain(['--role', 'api,gateway'], {
    DATABASE_URL: db.url,
    DEMO_USERS: '', // not asked for
    LOG_LEVEL: 'info',
    DATA_DIR: dataDir,
    SERVICE_CLIENT_SECRET: 'edge-logs-secret-0123456789',
    OFFLINE_MODEL_DELAY_MS: '0',
  });
  url = main.url;
  nginx = await startNginx({ upstream: Number(new URL(url).port) });
});
afterAll(async () => {
  await nginx?.stop();
  if (main && main.child.exitCode === null) {
    main.child.kill('SIGTERM');
    await main.exited;
  }
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('#13 demo users with DATABASE_URL', () => {
  it('are off unless asked for, and the start says so', async () => {
    expect(main.output()).toContain('Demo users are off: DATABASE_URL is set (DEMO_USERS=true turns them on).');
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM users');
    expect(rows[0].n).toBe(0);
    const res = await httpFrom('127.0.0.1', `${url}/api/auth/login`, { method: 'POST', json: { username: 'admin', password: 'demo-password-1' } });
    expect(res.status).toBe(401);
  });
});

describe('#11 session_hash stays out of the logs', () => {
  it('is redacted in the app info log and absent from the nginx access log', async () => {
    await db.pool.query("INSERT INTO users (username, password_hash, role) VALUES ('logger', $1, 'viewer')", [await hashPassword('logger-password-1')]);
    const token = await login(nginx.url, 'logger', 'logger-password-1');
    const auth = { authorization: `Bearer ${token}` };
    // 1. A real client turn through nginx: /queue/join, /queue/data?session_hash=…, heartbeat.
    const client = await connectChat(nginx.url, token);
    const turn = await collect(chat(client, 'What can you do?'));
    expect(turn.status).toBe('complete');
    const clientHash = (client as unknown as { session_hash: string }).session_hash;
    client.close();
    expect(clientHash).toMatch(/\w{6,}/);
    // 2. A known hash, in the query and in the heartbeat path, direct and through nginx.
    for (const base of [url, nginx.url]) {
      await httpFrom('127.0.0.1', `${base}/api/agent/gradio/gradio_api/queue/data?session_hash=${SECRET_HASH}`, { headers: auth, headersOnly: true });
      await httpFrom('127.0.0.1', `${base}/api/agent/gradio/gradio_api/heartbeat/${SECRET_HASH}`, { headers: auth, headersOnly: true });
    }
    await new Promise((r) => setTimeout(r, 1500)); // nginx writes the log line when the stream ends

    const appLog = main.output();
    expect(appLog).toMatch(/"url":"[^"]*session_hash=\[redacted\]/);
    expect(appLog).toContain('/heartbeat/[redacted]');
    const accessLog = await readFile(join(nginx.dir, 'access.log'), 'utf8');
    expect(accessLog).toContain('/gradio_api/queue/data ');
    expect(accessLog).toContain('/heartbeat/[redacted]');
    for (const secret of [SECRET_HASH, clientHash]) {
      expect(appLog).not.toContain(secret);
      expect(accessLog).not.toContain(secret);
    }
  });
});
