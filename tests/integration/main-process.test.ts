/**
 * The real process: `server/main.ts` starts the roles, prints its URL, and on SIGTERM ends open
 * streams with a terminal message, closes the pool and exits 0.
 */
import { spawn } from 'node:child_process';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startMain as startProcess } from '../helpers/main-process.ts';
import { canConnect } from '../helpers/nginx.ts';

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

  it('on SIGTERM, streams in flight on kept-alive connections (a completion, an event stream) end and do not hold the stop: exit 0', async () => {
    const main = await startMain([], { DATABASE_URL: db.url, OFFLINE_MODEL_DELAY_MS: '150', SHUTDOWN_GRACE_MS: '300' });
    const token = await login(main.url, 'admin');
    // As browsers and nginx's upstream keepalive do: the socket stays open after each response.
    const agent = new Agent({ keepAlive: true });
    const completion = openStream(agent, `${main.url}/api/agent/v1/chat/completions`, token, { messages: [{ role: 'user', content: 'tell me about yourself and what you can help me with today in detail' }], stream: true });
    await completion.seen('"type":"token"');
    const sessionId = /"session_id":"([^"]+)"/.exec(completion.text())![1];
    const events = openStream(agent, `${main.url}/api/agent/conversations/${sessionId}/events/stream`, token);
    await events.seen(': open');
    main.child.kill('SIGTERM');
    // Both end with their terminal frame (cut short by the stop), then the process exits by itself,
    // not by main's forced exit (1) once the grace is over.
    expect(await completion.ended).toContain('data: [DONE]');
    expect(await events.ended).toContain('event: drain');
    expect(await main.exited).toBe(0);
    agent.destroy();
  });

  it('on SIGTERM, a streaming completion that ends within the grace finishes in place: completed, then exit 0', async () => {
    const main = await startMain([], { DATABASE_URL: db.url, OFFLINE_MODEL_DELAY_MS: '20', SHUTDOWN_GRACE_MS: '20000' });
    const token = await login(main.url, 'admin');
    const completion = openStream(new Agent({ keepAlive: true }), `${main.url}/api/agent/v1/chat/completions`, token, { messages: [{ role: 'user', content: 'tell me about yourself and what you can help me with today in detail' }], stream: true });
    await completion.seen('"type":"token"');
    main.child.kill('SIGTERM');
    const body = await completion.ended;
    const end = JSON.parse(/event: session_end\ndata: (.*)\n/.exec(body)![1]);
    expect([end.status, end.metadata.stop_reason]).toEqual(['completed', 'end_turn']);
    expect(body).toContain('data: [DONE]');
    expect(await main.exited).toBe(0);
  });

  it('on SIGTERM, a request whose body is still arriving when the server stops listening is answered, and its kept-alive connection does not hold the stop: exit 0', async () => {
    // A grace longer than the test's timeout: only closing the connection once idle ends this stop in time.
    const main = await startMain([], { DATABASE_URL: db.url, SHUTDOWN_GRACE_MS: '120000' });
    const agent = new Agent({ keepAlive: true });
    const body = JSON.stringify({ username: 'viewer', password: 'demo-password-1' });
    const req = httpRequest(`${main.url}/api/auth/login`, { agent, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } });
    const answered = new Promise<IncomingMessage>((resolve, reject) => req.once('response', resolve).once('error', reject));
    // A slow upload: part of the body now (on the wire before the stop), the rest after the stop began.
    await new Promise((r) => req.write(body.slice(0, 10), r));
    await new Promise((r) => setTimeout(r, 100)); // for the server to read the request's head
    main.child.kill('SIGTERM');
    // The listening socket is gone: server.close() has begun, and this connection was not idle then.
    const port = Number(new URL(main.url).port);
    while (await canConnect(port)) await new Promise((r) => setTimeout(r, 20));
    req.end(body.slice(10));
    const res = await answered;
    res.resume();
    expect(res.statusCode).toBe(200);
    expect(await main.exited).toBe(0); // not the cut after the grace, nor main's forced exit (1)
    agent.destroy();
  });

  it('on SIGTERM, a request that never ends (a stalled upload) is cut once the grace is over: exit 0, not the forced exit', async () => {
    const main = await startMain([], { DATABASE_URL: db.url, SHUTDOWN_GRACE_MS: '300' });
    const body = JSON.stringify({ username: 'viewer', password: 'demo-password-1' });
    const req = httpRequest(`${main.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } });
    const outcome = new Promise<string>((resolve) => req.once('response', (res) => resolve(`answered ${res.statusCode}`)).once('error', (error) => resolve(`cut: ${error.message}`)));
    await new Promise((r) => req.write(body.slice(0, 10), r)); // and never the rest
    await new Promise((r) => setTimeout(r, 100)); // for the server to read the request's head
    main.child.kill('SIGTERM');
    expect(await main.exited).toBe(0);
    expect(await outcome).toMatch(/^cut: /);
    expect(main.output()).not.toContain('did not finish');
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

  it('refuses a second gateway on the same database without REPLICAS=true, with one line naming the setting; starts once the first is gone', async () => {
    const env = { DATABASE_URL: db.url, SERVICE_CLIENT_SECRET: 'peer-secret-0123456789abcdef' };
    const first = await startMain([], env);
    const second = await startMain([], env).then(
      (p) => (p.child.kill('SIGKILL'), 'started'),
      (error: Error) => error.message,
    );
    expect(second).toMatch(/Another Airlock gateway \(.+\) is running on this database; set REPLICAS=true to run several/);
    first.child.kill('SIGKILL'); // its pulse goes with it: no graceful goodbye needed
    await first.exited;
    const third = await startMain([], env);
    third.child.kill('SIGINT'); // at once: the stop is handled before the process says it is ready
    expect(await third.exited).toBe(0);
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

/** A streaming request on `agent`: what arrived so far, a wait for a fragment, and the whole body once it ends. */
function openStream(agent: Agent, url: string, token: string, body?: unknown) {
  let text = '';
  const waiters: Array<() => void> = [];
  const ended = new Promise<string>((resolve, reject) => {
    const req = httpRequest(url, { agent, method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) } }, (res: IncomingMessage) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        for (const wake of waiters.splice(0)) wake();
      });
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
  let done = false;
  void ended.finally(() => (done = true)).catch(() => {});
  const seen = async (fragment: string) => {
    while (!text.includes(fragment)) {
      if (done) throw new Error(`the stream ended without ${fragment}:\n${text}`);
      await Promise.race([new Promise<void>((wake) => waiters.push(wake)), ended]);
    }
  };
  return { text: () => text, seen, ended };
}

