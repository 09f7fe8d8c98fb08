/**
 * Downloads an attached file. The gateway serves stored files only with the user's bearer token
 * (a plain link would carry none), so the file is fetched and handed to the browser as a blob,
 * under the name the server gives it (`Content-Disposition`, read with the `content-disposition`
 * package: an export is named after its conversation's title, issue 37 item 8), else `name`.
 * @module
 */
import { parse } from 'content-disposition';
import { GRADIO_PATH } from './transport.ts';
import type { FileRef } from './types.ts';

/** The URL the gateway serves a stored file at. */
export function fileUrl(file: FileRef, base = ''): string {
  return `${base}${GRADIO_PATH}/gradio_api/file=${file.path.split('/').map(encodeURIComponent).join('/')}`;
}

/** Fetches the file with the token and saves it under its original name; throws on a non-2xx answer. */
export function downloadFile(file: FileRef, token: string | null, f: typeof fetch = globalThis.fetch.bind(globalThis)): Promise<void> {
  return downloadUrl(fileUrl(file), file.orig_name ?? file.path.split('/').pop() ?? 'file', token, f);
}

/** The file name a `Content-Disposition` header gives (`filename*` before `filename`), or null: none, or unreadable. */
export function dispositionName(header: string | null): string | null {
  if (!header) return null;
  try {
    const name = parse(header).parameters.filename;
    // A name, never a path: the browser saves into its downloads folder under this name.
    return name ? (name.split(/[\\/]/).pop() ?? null) || null : null;
  } catch {
    return null;
  }
}

/** Fetches a URL with the bearer token and saves what it answers under the server's name, else `name` (a file, an export). */
export async function downloadUrl(url: string, name: string, token: string | null, f: typeof fetch = globalThis.fetch.bind(globalThis)): Promise<void> {
  const res = await f(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (!res.ok) throw new Error(`Download failed (${res.status}).`);
  const href = URL.createObjectURL(await res.blob());
  const a = Object.assign(document.createElement('a'), { href, download: dispositionName(res.headers.get('content-disposition')) ?? name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}
