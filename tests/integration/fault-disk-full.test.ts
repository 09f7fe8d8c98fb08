/**
 * Fault (crash-safety issue): the upload folder's disk fills up. A real tmpfs of 256 KiB is mounted
 * where the gateway stores uploads (root can mount one; elsewhere the test says why it cannot run).
 * The real @gradio/client and raw multipart (as curl sends it) upload past the free space: the
 * answer is a retryable 507 STORAGE_FULL, nothing of the refused request stays on the disk, and
 * once space is there again an upload and a chat turn with it work.
 */
import type { Client } from '@gradio/client';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { createFaultTable } from '../helpers/fault-table.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const run = promisify(execFile);
const DISK_BYTES = 256 * 1024;
const canMount = process.getuid?.() === 0;
if (!canMount) console.log('fault-disk-full: needs root to mount a tmpfs; not run as this user');

const table = createFaultTable('disk-full');
let dataDir: string;
let uploads: string;
let db: TestDatabase;
let server: TestServer;
let client: Client;
let token: string;

beforeAll(async () => {
  if (!canMount) return;
  dataDir = await mkdtemp(join(tmpdir(), 'airlock-disk-full-'));
  uploads = join(dataDir, 'uploads');
  await mkdir(uploads);
  await run('mount', ['-t', 'tmpfs', '-o', `size=${DISK_BYTES},mode=0700`, 'tmpfs', uploads]);
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { DATA_DIR: dataDir, UPLOAD_MAX_BYTES: String(4 * DISK_BYTES) } });
  token = await login(server.url, 'operator');
  client = await connectChat(server.url, token);
});

afterAll(async () => {
  table.print();
  client?.close();
  await server?.close();
  await db?.drop();
  if (uploads) await run('umount', [uploads]).catch(() => {});
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const uploadUrl = () => `${server.url}/api/agent/gradio/gradio_api/upload`;
const file = (name: string, bytes: number) => new File([new Uint8Array(bytes).fill(97)], name, { type: 'text/plain' });

/** Bytes in use on the tmpfs, and every file left in the store (any folder, .tmp included). */
async function diskState(): Promise<{ usedBytes: number; files: string[] }> {
  const s = await statfs(uploads);
  const files = (await readdir(uploads, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  return { usedBytes: (s.blocks - s.bfree) * s.bsize, files };
}

describe.skipIf(!canMount)('the upload disk is full', () => {
  it('the real client gets an error naming HTTP 507, and nothing of the upload stays on the disk', async () => {
    const before = await diskState();
    const result = await client.upload_files(`${server.url}/api/agent/gradio`, [file('big.log', DISK_BYTES * 2)]);
    expect(result.files).toBeUndefined();
    expect(result.error).toMatch(/507/);
    expect((await diskState()).files).toEqual(before.files);
    table.record({ fault: 'upload past a full disk (@gradio/client)', outcome: 'HTTP 507, partial file removed', lost: 0 });
  });

  // Runs on the connection the refusal above left: before `connection: close` on early refusals,
  // the unread rest of that body made this request hang.
  it('raw multipart (as curl sends it): 507 STORAGE_FULL, retryable, Retry-After; a request with a part that fitted keeps neither', async () => {
    const form = new FormData();
    form.append('files', file('fits.txt', 16 * 1024));
    form.append('files', file('too-big.txt', DISK_BYTES * 2));
    const res = await fetch(uploadUrl(), { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    expect(res.status).toBe(507);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await res.json()) as { detail: string; error: { code: string; retryable: boolean } };
    expect(body.error).toMatchObject({ code: 'STORAGE_FULL', retryable: true });
    expect(body.detail).toMatch(/no room/);
    const after = await diskState();
    expect(after.files).toEqual([]);
    expect(after.usedBytes).toBeLessThan(DISK_BYTES / 4); // the space is free again, not leaked
    table.record({ fault: 'two-part upload, second past the disk', outcome: '507 STORAGE_FULL, neither part kept', lost: 0 });
  });

  it('with room again, an upload and a chat turn that reads it work', async () => {
    const result = await client.upload_files(`${server.url}/api/agent/gradio`, [file('small.txt', 2 * 1024)]);
    expect(result.error).toBeUndefined();
    const [path] = result.files!;
    const turn = await collect(client.submit('/chat', { message: { text: 'what is in this file?', files: [{ path, orig_name: 'small.txt', meta: { _type: 'gradio.FileData' } }] } }));
    expect(turn.types).not.toContain('error');
    expect(turn.final!.content.length).toBeGreaterThan(0);
    table.record({ fault: 'disk full, then room again', outcome: 'next upload and turn work', lost: 0 });
  });
});
