/**
 * Attack tests for uploads bound to their uploader (issue 9 items 5 and 6): another user's file is
 * a 404 to download and unknown to attach, responses carry opaque ids (no server path, no content
 * hash), files are 0600 in 0700 folders, names lose bidi controls and are percent-decoded before
 * their basename is taken (issue 36 item 10), and the per-request total, the
 * per-user quota (race included) and the retention sweep hold.
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, handle_file } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EndpointError, lookupStoredFile, type EndpointDefinition } from '../../server/gradio/index.ts';
import { ownerFolder } from '../../server/gradio/ownership.ts';
import { startGradioServer, type GradioTestServer } from './gradio-server.ts';

type Who = { user: string };
const KB = 1024;
let server: GradioTestServer;

/** Reads attached files the way /chat does: only the caller's own uploads resolve. */
const endpoints: EndpointDefinition<Who>[] = [
  {
    apiName: 'attach',
    inputs: [{ name: 'message', label: 'Message', component: 'multimodaltextbox' }],
    outputs: [{ label: 'Response', component: 'json' }],
    handler: async ({ data, identity }) => {
      const { files } = data[0] as { files: { path: string }[] };
      for (const f of files) {
        if (!(await lookupStoredFile(server.dataDir, f.path, identity.user))) throw new EndpointError(`The file ${f.path} was not uploaded here.`);
      }
      return [{ attached: files.length }];
    },
  },
];

const authenticate = async (headers: Record<string, unknown>) => {
  const m = /^Bearer (\w+)$/.exec(String(headers.authorization));
  return m ? { user: m[1] } : null;
};
const as = (user: string) => ({ authorization: `Bearer ${user}` });

async function upload(url: string, user: string, files: [Blob, string][]): Promise<{ status: number; body: any }> {
  const form = new FormData();
  for (const [blob, name] of files) form.append('files', blob, name);
  const response = await fetch(`${url}/gradio_api/upload`, { method: 'POST', body: form, headers: as(user) });
  return { status: response.status, body: await response.json() };
}
const bytes = (n: number, fill = 1) => new Blob([new Uint8Array(n).fill(fill)]);

beforeAll(async () => {
  server = await startGradioServer(endpoints, {
    authenticate,
    identityKey: (identity: Who) => identity.user,
    uploadMaxBytes: 64 * KB,
    uploadRequestMaxBytes: 100 * KB,
    uploadQuotaBytes: 150 * KB,
  });
});
afterAll(async () => {
  await server?.close();
});

describe('uploads bound to their owner', () => {
  it("B can neither download nor attach A's file; A can", async () => {
    const { status, body } = await upload(server.url, 'alice', [[new Blob(['alice private']), 'notes.txt']]);
    expect(status).toBe(200);
    const [path] = body as string[];
    expect((await fetch(`${server.url}/gradio_api/file=${path}`, { headers: as('alice') })).status).toBe(200);
    for (const method of ['GET', 'HEAD']) {
      const stolen = await fetch(`${server.url}/gradio_api/file=${path}`, { method, headers: as('bob') });
      expect([method, stolen.status]).toEqual([method, 404]);
    }
    expect((await fetch(`${server.url}/gradio_api/file=${path}`)).status).toBe(401);
    // the absolute path on disk is no way in either
    const onDisk = join(server.dataDir, ownerFolder('alice'), path);
    expect((await fetch(`${server.url}/gradio_api/file=${onDisk}`, { headers: as('bob') })).status).toBe(404);

    const bob = await Client.connect(server.url, { headers: as('bob') });
    await expect(bob.predict('/attach', [{ text: 'x', files: [{ path, meta: { _type: 'gradio.FileData' } }] }])).rejects.toMatchObject({
      message: expect.stringMatching(/not uploaded here/),
    });
    const alice = await Client.connect(server.url, { headers: as('alice') });
    expect((await alice.predict('/attach', [{ text: 'x', files: [{ path, meta: { _type: 'gradio.FileData' } }] }])).data).toEqual([{ attached: 1 }]);
    // the real client's upload -> submit flow, with an opaque path
    expect((await alice.predict('/attach', [{ text: 'y', files: [handle_file(new Blob(['fresh']))] }])).data).toEqual([{ attached: 1 }]);
    bob.close();
    alice.close();
  });

  it('answers opaque ids: no server path, no content hash, and equal content gets different ids', async () => {
    const content = 'same bytes';
    const a = (await upload(server.url, 'carol', [[new Blob([content]), 'a.txt']])).body[0] as string;
    const b = (await upload(server.url, 'carol', [[new Blob([content]), 'a.txt']])).body[0] as string;
    expect(a).toMatch(/^[0-9a-f]{32}\/a\.txt$/);
    expect(a).not.toBe(b);
    expect(a + b).not.toContain(createHash('sha256').update(content).digest('hex').slice(0, 16));
    expect(a + b).not.toContain(server.dataDir);
  });

  it('stores files 0600 in 0700 folders and strips bidi controls from names', async () => {
    const [path] = (await upload(server.url, 'dave', [[new Blob(['x']), 'invoice\u202egnp.exe']])).body as string[];
    expect(path).toMatch(/^[0-9a-f]{32}\/invoicegnp\.exe$/);
    const full = join(server.dataDir, ownerFolder('dave'), path);
    expect((await stat(full)).mode & 0o777).toBe(0o600);
    for (const dir of [join(full, '..'), join(server.dataDir, ownerFolder('dave')), server.dataDir]) {
      expect([dir, (await stat(dir)).mode & 0o777]).toEqual([dir, 0o700]);
    }
  });

  it('percent-encoded names are decoded, then cut to their basename; the owner downloads each as the path says', async () => {
    const names: Array<[string, string]> = [
      ['%2e%2e%2fx.txt', 'x.txt'],
      ['..%2F..%2Fetc%2Fpasswd', 'passwd'],
      ['%252e%252e%252fy.txt', 'y.txt'],
      ['report%20final.txt', 'report final.txt'],
    ];
    const { status, body } = await upload(server.url, 'erin', names.map(([name], i) => [new Blob([`content ${i}`]), name] as [Blob, string]));
    expect(status).toBe(200);
    const paths = body as string[];
    expect(paths.map((p) => p.split('/')[1])).toEqual(names.map(([, stored]) => stored));
    for (const [i, path] of paths.entries()) {
      // As a Gradio client builds it: the path as the upload answered it, into the URL.
      const res = await fetch(`${server.url}/gradio_api/file=${path}`, { headers: as('erin') });
      expect([path, res.status, await res.text()]).toEqual([path, 200, `content ${i}`]);
    }
    // Nothing landed outside the id folders.
    expect(paths.every((p) => /^[0-9a-f]{32}\/[^/]+$/.test(p))).toBe(true);
  });
});

describe('upload byte limits', () => {
  it('413 past the per-request total, keeping none of that request', async () => {
    const refused = await upload(server.url, 'erin', [
      [bytes(60 * KB), 'one.bin'],
      [bytes(60 * KB), 'two.bin'],
    ]);
    expect(refused.status).toBe(413);
    expect(refused.body.detail).toMatch(/per request/);
    // nothing of that request stayed, so the whole quota is still free
    expect((await upload(server.url, 'erin', [[bytes(60 * KB), 'ok.bin']])).status).toBe(200);
  });

  it("413 past one user's quota, even racing, while other users still upload", async () => {
    const results = await Promise.all([1, 2, 3].map((i) => upload(server.url, 'frank', [[bytes(60 * KB, i), `f${i}.bin`]])));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 413]);
    expect(results.find((r) => r.status === 413)!.body.detail).toMatch(/quota/i);
    expect((await upload(server.url, 'frank', [[bytes(40 * KB), 'more.bin']])).status).toBe(413);
    expect((await upload(server.url, 'grace', [[bytes(60 * KB), 'g.bin']])).status).toBe(200);
  });
});

describe('retention sweep', () => {
  it('removes expired uploads but never one still referenced', async () => {
    const swept = await startGradioServer(endpoints, {
      authenticate,
      identityKey: (identity: Who) => identity.user,
      uploadMaxBytes: 64 * KB,
      uploadRetentionMs: 300,
      uploadSweepIntervalMs: 100,
      // Decided by name, not after the upload returns: under load the sweep may run before that.
      isFileReferenced: (path) => path.endsWith('/ref.txt'),
    });
    try {
      const [old, referenced] = (await upload(swept.url, 'alice', [
        [new Blob(['old']), 'old.txt'],
        [new Blob(['ref']), 'ref.txt'],
      ])).body as string[];
      // Bodies are read to the end: a response left unread keeps its connection busy and close() waiting.
      const status = async (path: string) => {
        const res = await fetch(`${swept.url}/gradio_api/file=${path}`, { headers: as('alice') });
        await res.arrayBuffer();
        return res.status;
      };
      await expect.poll(() => status(old), { timeout: 5000 }).toBe(404);
      expect(await status(referenced)).toBe(200);
    } finally {
      // This test's own keep-alive socket may turn idle just after close() began, which would hold
      // close() for the keep-alive timeout on a loaded machine: nothing is in flight, so drop it first.
      swept.app.server.closeAllConnections();
      await swept.close();
    }
  });
});
