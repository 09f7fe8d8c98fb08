/**
 * Downloads an attached file. The gateway serves stored files only with the user's bearer token
 * (a plain link would carry none), so the file is fetched and handed to the browser as a blob.
 * @module
 */
import { GRADIO_PATH } from './transport.ts';
import type { FileRef } from './types.ts';

/** The URL the gateway serves a stored file at. */
export function fileUrl(file: FileRef, base = ''): string {
  return `${base}${GRADIO_PATH}/gradio_api/file=${file.path.split('/').map(encodeURIComponent).join('/')}`;
}

/** Fetches the file with the token and saves it under its original name; throws on a non-2xx answer. */
export async function downloadFile(file: FileRef, token: string | null, f: typeof fetch = globalThis.fetch.bind(globalThis)): Promise<void> {
  const res = await f(fileUrl(file), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (!res.ok) throw new Error(`Download failed (${res.status}).`);
  const url = URL.createObjectURL(await res.blob());
  const a = Object.assign(document.createElement('a'), { href: url, download: file.orig_name ?? file.path.split('/').pop() ?? 'file' });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
