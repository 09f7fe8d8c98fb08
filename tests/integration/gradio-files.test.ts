/**
 * Upload and download through the gradio plugin: the real @gradio/client uploads a file nested in
 * the arguments, the handler reads it from storage by its opaque client path, the file route serves
 * only stored files.
 */
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, handle_file } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveStoredPath, type EndpointDefinition } from '../../server/gradio/index.ts';
import { startGradioServer, type GradioTestServer } from './gradio-server.ts';

let server: GradioTestServer;
const endpoints: EndpointDefinition[] = [
  {
    apiName: 'describe',
    inputs: [{ name: 'message', label: 'Message', component: 'multimodaltextbox' }],
    outputs: [{ label: 'Response', component: 'json' }],
    handler: async ({ data }) => {
      const message = data[0] as { text: string; files: { path: string }[] };
      const files = await Promise.all(
        message.files.map(async (f) => {
          const path = resolveStoredPath(server.dataDir, f.path);
          if (!path) throw new Error(`not an uploaded file: ${f.path}`);
          return { text: (await readFile(path)).toString('utf8'), stored: path };
        }),
      );
      return [{ text: message.text, files }];
    },
  },
];

beforeAll(async () => {
  server = await startGradioServer(endpoints, { uploadMaxBytes: 64 * 1024 });
});
afterAll(async () => {
  await server?.close();
});

describe('upload and files', () => {
  it('uploads a Blob nested in the arguments and the handler reads it back', async () => {
    const client = await Client.connect(server.url);
    const content = 'hello from a file';
    const result = await client.predict('/describe', [{ text: 'see attached', files: [handle_file(new Blob([content], { type: 'text/plain' }))] }]);
    const [value] = result.data as any[];
    expect(value.text).toBe('see attached');
    expect(value.files[0].text).toBe(content);
    // Stored under a random id in the shared folder (this app binds no identities), not by content hash.
    expect(value.files[0].stored).toMatch(new RegExp(`^${server.dataDir}/shared/[0-9a-f]{32}/blob$`));
    expect(value.files[0].stored).not.toContain(createHash('sha256').update(content).digest('hex'));
  });

  it('returns opaque <id>/<name> paths in order (no server path, no content hash), serves them with GET and HEAD', async () => {
    const form = new FormData();
    form.append('files', new Blob(['one']), 'a.txt');
    form.append('files', new Blob(['two']), '../../evil name.txt');
    const response = await fetch(`${server.url}/gradio_api/upload`, { method: 'POST', body: form });
    expect(response.status).toBe(200);
    const paths = (await response.json()) as string[];
    expect(paths).toEqual([expect.stringMatching(/^[0-9a-f]{32}\/a\.txt$/), expect.stringMatching(/^[0-9a-f]{32}\/evil name\.txt$/)]);
    expect(paths.join()).not.toContain(server.dataDir);
    expect(paths.join()).not.toContain(createHash('sha256').update('one').digest('hex'));
    const got = await fetch(`${server.url}/gradio_api/file=${paths[1]}`);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await got.text()).toBe('two');
    const head = await fetch(`${server.url}/gradio_api/file=${encodeURI(paths[0])}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('3');
  });

  it('refuses files it did not store and traversal', async () => {
    const outside = join(server.dataDir, '..', 'secret.txt');
    await writeFile(outside, 'secret');
    const id = 'f'.repeat(32);
    const form = new FormData();
    form.append('files', new Blob(['mine']), 'mine.txt');
    const [stored] = (await (await fetch(`${server.url}/gradio_api/upload`, { method: 'POST', body: form })).json()) as string[];
    const absolute = join(server.dataDir, 'shared', stored);
    for (const path of [outside, '/etc/passwd', absolute, `${server.dataDir}/shared/${id}/../../secret.txt`, `${id}/missing.txt`, `${id}/../../secret.txt`, '%2e%2e/%2e%2e/etc/passwd']) {
      const response = await fetch(`${server.url}/gradio_api/file=${path}`);
      expect([path, response.status]).toEqual([path, 404]);
    }
  });

  it('answers 413 beyond the upload limit and stores nothing', async () => {
    const form = new FormData();
    form.append('files', new Blob([new Uint8Array(65 * 1024)]), 'big.bin');
    const response = await fetch(`${server.url}/gradio_api/upload`, { method: 'POST', body: form });
    expect(response.status).toBe(413);
    expect((await response.json()).detail).toMatch(/too large/i);
    const client = await Client.connect(server.url);
    await expect(client.predict('/describe', [{ text: 'x', files: [handle_file(new Blob([new Uint8Array(65 * 1024)]))] }])).rejects.toBeTruthy();
  });

  it('400 for an upload without files parts', async () => {
    const form = new FormData();
    form.append('other', 'x');
    const response = await fetch(`${server.url}/gradio_api/upload`, { method: 'POST', body: form });
    expect(response.status).toBe(400);
  });
});
