/**
 * Issue 36 item 11: a file URL whose body streams past FILE_URL_MAX_BYTES (no Content-Length) is
 * refused as `too_large` to the caller of `fetchUrlToUploads`, every time, and its size meter's
 * error never goes unheard (an unheard one was an uncaught exception: it ended the gateway). A real
 * local file server; the upload store is the real one on a temporary folder, once as it is (50
 * fetches in a row) and once starting to read only after the meter has failed (the window that
 * was open while the store awaited its budget and folders), which failed every time before.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allowList, fetchUrlToUploads, UploadStore } from '../../../../server/gradio/index.ts';

const MAX = 1000;
let server: Server;
let base: string;
let dir: string;
let unheard: unknown[] = [];
const count = (error: unknown) => void unheard.push(error);

beforeAll(async () => {
  server = createServer((_req, res) => {
    // No Content-Length (chunked): only the meter can cut it.
    res.writeHead(200, { 'content-type': 'text/plain' });
    for (let i = 0; i < 4; i++) res.write('y'.repeat(600));
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), 'airlock-url-fetch-'));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  unheard = [];
  process.on('uncaughtException', count);
  process.on('unhandledRejection', count);
});

afterEach(() => {
  process.off('uncaughtException', count);
  process.off('unhandledRejection', count);
});

type SaveTail = Parameters<UploadStore['save']> extends [Readable, ...infer R] ? R : never;

const options = { maxBytes: MAX, timeoutMs: 10_000, allow: allowList(['127.0.0.1/32']) };

/** Lets the event loop turn until `source` has failed (or a bound is reached), adding no listener. */
async function untilFailed(source: Readable): Promise<void> {
  for (let i = 0; i < 10_000 && !source.errored && !source.destroyed; i++) await new Promise((r) => setImmediate(r));
}

describe('a body streamed past FILE_URL_MAX_BYTES', () => {
  it('50 in a row: each refused to the caller as too_large, none kept, 0 uncaught errors', async () => {
    const store = new UploadStore(join(dir, 'plain'), { requestMaxBytes: 1e6, quotaBytes: 1e6 });
    const reasons: string[] = [];
    for (let i = 0; i < 50; i++) {
      const error = await fetchUrlToUploads(`${base}/big-${i}.txt`, { store, owner: 'u1' }, options).catch((e: { reason?: string }) => e);
      reasons.push(String((error as { reason?: string }).reason));
    }
    expect(reasons).toEqual(Array(50).fill('too_large'));
    expect(await store.usage('u1')).toBe(0);
    expect(unheard).toEqual([]);
  });

  it('a store that starts reading only after the meter failed still hears it: too_large, 0 uncaught errors', async () => {
    let failedBeforeRead = false;
    class LateStore extends UploadStore {
      override async save(source: Readable, ...rest: SaveTail) {
        await untilFailed(source);
        failedBeforeRead = source.errored !== null;
        return super.save(source, ...rest);
      }
    }
    const late = new LateStore(join(dir, 'late'), { requestMaxBytes: 1e6, quotaBytes: 1e6 });
    const attempt = fetchUrlToUploads(`${base}/late.txt`, { store: late, owner: 'u1' }, options);
    await expect(attempt).rejects.toMatchObject({ reason: 'too_large', message: expect.stringContaining('FILE_URL_MAX_BYTES') });
    expect(failedBeforeRead).toBe(true);
    expect(await late.usage('u1')).toBe(0);
    expect(unheard).toEqual([]);
  });
});
