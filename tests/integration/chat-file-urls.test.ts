/**
 * Issue 24 item 2: a /chat file given by URL (`handle_file("https://…")` in @gradio/client, the same
 * FileData from Python's gradio_client, its request sequence replayed) is fetched when
 * FILE_URL_FETCH=true, and refused with a VALIDATION_ERROR naming the setting otherwise. The
 * attacks are performed: loopback, the metadata address 169.254.169.254, a name resolving to
 * loopback (the system resolver), IPv4 inside IPv6, a redirect to a private address, an oversize body (declared and
 * streamed), a body that never ends, and DNS rebinding (a name that answers an allowed address,
 * then a private one). "Private" here is a second file server on 127.0.0.2 that counts its hits:
 * none may reach it. The allowed file server is 127.0.0.1 (FILE_URL_FETCH_ALLOW_CIDRS=127.0.0.1/32).
 */
import { handle_file, type Client } from '@gradio/client';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowList, fetchUrlToUploads, FileUrlError, UploadStore } from '../../server/gradio/index.ts';
import { collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { chatFnIndex, pythonPredict } from '../helpers/python-predict.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { lastUserParts, startScriptedModel } from './attachment-fixtures.ts';

const REPORT = 'Quarterly report: payments-api error rate 0.42%.';

/** The allowed file server (127.0.0.1). */
let files: Server;
let filesUrl: string;
/** The "private" one (127.0.0.2): any hit is a successful attack. */
let secret: Server;
let secretUrl: string;
let secretHits = 0;

let model: Awaited<ReturnType<typeof startScriptedModel>>;
let dbOn: TestDatabase;
let dbOff: TestDatabase;
let on: TestServer;
let off: TestServer;
let adminOn: Client;
let adminOnToken: string;

async function listen(server: Server, host: string): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  files = createServer((req, res) => {
    if (req.url === '/report.txt') return res.writeHead(200, { 'content-type': 'text/plain' }).end(REPORT);
    if (req.url === '/moved') return res.writeHead(302, { location: '/report.txt' }).end();
    if (req.url === '/to-secret') return res.writeHead(302, { location: `${secretUrl}/latest/meta-data/` }).end();
    if (req.url === '/to-metadata') return res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/iam/' }).end();
    if (req.url === '/declared-big') return res.writeHead(200, { 'content-length': '5000' }).end('x'.repeat(5000));
    if (req.url === '/streamed-big') {
      // No Content-Length: the limit must cut the body itself.
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('y'.repeat(500)), 5);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (req.url === '/slow') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.write('the first bytes, then nothing');
    }
    res.writeHead(404).end();
  });
  secret = createServer((_req, res) => {
    secretHits++;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('instance credentials');
  });
  [filesUrl, secretUrl] = await Promise.all([listen(files, '127.0.0.1'), listen(secret, '127.0.0.2')]);
  model = await startScriptedModel();
  [dbOn, dbOff] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  const env = { OPENAI_BASE_URL: model.baseUrl, OPENAI_MODEL: 'scripted' };
  [on, off] = await Promise.all([
    startTestServer({
      db: dbOn,
      env: { ...env, FILE_URL_FETCH: 'true', FILE_URL_FETCH_ALLOW_CIDRS: '127.0.0.1/32', FILE_URL_MAX_BYTES: '1000', FILE_URL_TIMEOUT_MS: '1500' },
    }),
    startTestServer({ db: dbOff, env }),
  ]);
  adminOnToken = await login(on.url, 'admin');
  adminOn = await connectChat(on.url, adminOnToken);
});

afterAll(async () => {
  adminOn?.close();
  await Promise.all([on?.close(), off?.close()]);
  files?.closeAllConnections();
  await Promise.all([new Promise((r) => files?.close(r)), new Promise((r) => secret?.close(r)), model?.app.close()]);
  await Promise.all([dbOn?.drop(), dbOff?.drop()]);
});

/** One /chat turn with the file `handle_file(url)` makes, through the real @gradio/client. */
const sendUrl = (client: Client, url: string, text = 'Summarise the attached report.') =>
  collect(client.submit('/chat', { message: { text, files: [handle_file(url)] }, conversation_id: 'new' }));

/** Bytes the admin keeps in uploads on the fetching server. */
async function adminUploadBytes(): Promise<number> {
  const { rows } = await dbOn.pool.query(`SELECT id FROM users WHERE username = 'admin'`);
  return new UploadStore(`${on.config.dataDir}/uploads`, { requestMaxBytes: 1e9, quotaBytes: 1e9 }).usage(rows[0].id);
}

describe('a file given by URL', () => {
  it('is refused with FILE_URL_FETCH off (the default), naming the setting', async () => {
    const client = await connectChat(off.url, await login(off.url, 'admin'));
    const turn = await sendUrl(client, `${filesUrl}/report.txt`);
    client.close();
    expect(turn.status).toBe('error');
    expect(turn.final?.metadata).toMatchObject({ type: 'error', code: 'VALIDATION_ERROR' });
    expect(String(turn.final?.metadata.detail)).toContain('FILE_URL_FETCH');
  });

  it('@gradio/client handle_file(url): fetched, stored as the caller\'s upload, and read by the model', async () => {
    const before = model.requests.length;
    const turn = await sendUrl(adminOn, `${filesUrl}/report.txt`);
    expect(turn.status).toBe('complete');
    const attachments = turn.messages.find((m) => m.metadata.type === 'attachments')?.metadata.files as Array<Record<string, unknown>>;
    expect(attachments).toMatchObject([{ orig_name: 'report.txt', size: REPORT.length, kind: 'text', status: 'read' }]);
    const sent = model.requests.slice(before).find((r) => r.messages.at(-1)?.role === 'user');
    expect(lastUserParts(sent).map((p) => p.text ?? '').join('\n')).toContain(REPORT);
    // The stored message names an upload (`<id>/<name>`), never the URL.
    const { rows } = await dbOn.pool.query(`SELECT metadata -> 'files' AS files FROM messages WHERE conversation_id = $1 AND role = 'user'`, [turn.final?.metadata.conversation_id]);
    expect(JSON.stringify(rows[0].files)).toMatch(/"path":"[0-9a-f]{32}\/report\.txt"/);
    expect(JSON.stringify(rows[0].files)).not.toContain('http');
  });

  it("Python handle_file(url) (gradio_client's join replayed) and a redirect within allowed addresses", async () => {
    const base = `${on.url}/api/agent/gradio`;
    const chatIndex = await chatFnIndex(base, adminOnToken);
    // gradio_client sends a URL FileData as is (it uploads only local paths).
    const file = { path: `${filesUrl}/moved`, orig_name: 'moved', meta: { _type: 'gradio.FileData' } };
    const data = [{ text: 'What does this say?', files: [file] }, 'new', null, null, null, null, null];
    const before = model.requests.length;
    const result = await pythonPredict({ base, chatIndex }, adminOnToken, 'py-file-url', data);
    expect(result.success).toBe(true);
    const sent = model.requests.slice(before).find((r) => r.messages.at(-1)?.role === 'user');
    expect(lastUserParts(sent).map((p) => p.text ?? '').join('\n')).toContain(REPORT);
  });

  const refusedBy = async (url: string) => {
    const turn = await sendUrl(adminOn, url);
    expect(turn.status).toBe('error');
    return turn.final?.metadata as unknown as { code: string; detail: string };
  };

  it.each([
    ['loopback outside the allowed range', () => `${secretUrl}/latest/meta-data/`],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/iam/security-credentials/'],
    ['IPv4 loopback inside IPv6', () => `http://[::ffff:127.0.0.2]:${new URL(secretUrl).port}/`],
    ['IPv6 loopback', () => `http://[::1]:${new URL(secretUrl).port}/`],
    ['a redirect to a private address', () => `${filesUrl}/to-secret`],
    ['a redirect to the metadata address', () => `${filesUrl}/to-metadata`],
  ])('refuses %s, and nothing reaches it', async (_name, url) => {
    const error = await refusedBy(url());
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(error.detail).toMatch(/private, loopback or link-local/);
    expect(secretHits).toBe(0);
  });

  it('refuses a body past FILE_URL_MAX_BYTES, declared or streamed, and keeps none of it', async () => {
    const usage = await adminUploadBytes();
    for (const path of ['/declared-big', '/streamed-big']) {
      const error = await refusedBy(`${filesUrl}${path}`);
      expect(error.code).toBe('PAYLOAD_TOO_LARGE');
      expect(error.detail).toContain('FILE_URL_MAX_BYTES');
    }
    expect(await adminUploadBytes()).toBe(usage);
  });

  it('ends a body that never finishes at FILE_URL_TIMEOUT_MS, keeping none of it', async () => {
    const usage = await adminUploadBytes();
    const error = await refusedBy(`${filesUrl}/slow`);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.detail).toContain('did not arrive within 1500 ms');
    expect(await adminUploadBytes()).toBe(usage);
  });
});

describe('DNS rebinding (the fetch connects to the address it checked)', () => {
  const store = () => new UploadStore(`${on.config.dataDir}/rebinding`, { requestMaxBytes: 1e6, quotaBytes: 1e6 });
  const port = () => new URL(filesUrl).port;

  it('a name answering an allowed address, then a private one: one resolution, the checked address is the one reached', async () => {
    const answers = ['127.0.0.1', '127.0.0.2'];
    let lookups = 0;
    const resolve = async () => [{ address: answers[Math.min(lookups++, 1)], family: 4 }];
    const fetched = await fetchUrlToUploads(`http://rebind.test:${port()}/report.txt`, { store: store(), owner: 'u1' }, { maxBytes: 1000, timeoutMs: 1500, allow: allowList(['127.0.0.1/32']), resolve });
    expect(fetched.size).toBe(REPORT.length);
    expect(lookups).toBe(1);
    expect(secretHits).toBe(0);
  });

  it('a name the system resolves to loopback is refused (no allowed ranges)', async () => {
    const attempt = fetchUrlToUploads(`http://localhost:${port()}/report.txt`, { store: store(), owner: 'u1' }, { maxBytes: 1000, timeoutMs: 1500 });
    await expect(attempt).rejects.toMatchObject({ reason: 'refused', message: expect.stringContaining('private, loopback or link-local') });
  });

  it('a name with one private address among allowed ones is refused', async () => {
    const resolve = async () => [{ address: '127.0.0.1', family: 4 }, { address: '10.0.0.7', family: 4 }];
    const attempt = fetchUrlToUploads(`http://mixed.test:${port()}/report.txt`, { store: store(), owner: 'u1' }, { maxBytes: 1000, timeoutMs: 1500, allow: allowList(['127.0.0.1/32']), resolve });
    await expect(attempt).rejects.toBeInstanceOf(FileUrlError);
    await expect(attempt).rejects.toMatchObject({ reason: 'refused' });
  });
});
