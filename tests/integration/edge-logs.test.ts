/**
 * Issue 9, items 11 and 13, on the real process (`server/main.ts`) behind the real nginx:
 * - with DATABASE_URL set and DEMO_USERS not asked for, no demo users exist and the start says so;
 * - a Gradio session_hash (a capability) never appears in the app's info logs nor in nginx's
 *   access log, whether it came in the query (/queue/data) or the path (/heartbeat);
 * - nor does a decision-link token (issue 36 item 6): the page `/approve/<token>` and the API's
 *   `/api/agent/v1/approve/<token>[/approve]`, direct and through nginx.
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
import { eventually } from './v1-support.ts';

const SECRET_HASH = 'edgesecrethash0123';
/** A decision-link token's shape: 32 bytes, base64url. */
const LINK_TOKEN = 'bGlua3Rva2VuLWVkZ2UtbG9ncy0wMTIzNDU2Nzg5YWI';

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

describe('a decision-link token stays out of the logs', () => {
  it('is redacted in the app info log and in the nginx access log, page and API', async () => {
    const paths = [`/approve/${LINK_TOKEN}`, `/api/agent/v1/approve/${LINK_TOKEN}`, `/api/agent/v1/approve/${LINK_TOKEN}/approve`];
    for (const base of [url, nginx.url]) {
      for (const path of paths) await httpFrom('127.0.0.1', `${base}${path}`, path.endsWith('/approve') ? { method: 'POST', json: {} } : {});
    }
    const accessLog = await eventually(async () => {
      const text = await readFile(join(nginx.dir, 'access.log'), 'utf8');
      return text.includes('/api/agent/v1/approve/[redacted]/approve ') ? text : null;
    }, 10_000, 'the access log lines');
    expect(accessLog).toContain('"GET /approve/[redacted] ');
    expect(accessLog).toContain('"GET /api/agent/v1/approve/[redacted] ');
    const appLog = main.output();
    for (const path of ['/approve/[redacted]"', '/api/agent/v1/approve/[redacted]"', '/api/agent/v1/approve/[redacted]/approve"']) expect(appLog).toContain(`"url":"${path}`);
    expect(appLog).not.toContain(LINK_TOKEN);
    expect(accessLog).not.toContain(LINK_TOKEN);
  });
});
