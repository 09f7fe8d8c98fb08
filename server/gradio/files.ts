/**
 * Upload paths: a stored file lives at `<dataDir>/<owner folder>/<id>/<basename>` and clients see
 * only `<id>/<basename>`, where `<id>` is random (it says nothing about the content, unlike a
 * content hash, and no absolute server path leaves the server). A path resolves only inside the
 * caller's own folder, so another owner's id is simply not found (no traversal, no cross-user
 * reads). Pure functions but `lookupStoredFile`.
 * @module
 */
import { stat } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { ownerFolder, type OwnerKey } from './ownership.ts';

const ID = /^[0-9a-f]{32}$/;

/** Bidirectional-text controls (Trojan Source, spoofed extensions like `gnp.exe` shown as `exe.png`). */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A safe file name: the basename, without control, bidi or path characters, at most 200 chars. */
export function safeBasename(name: string | undefined): string {
  const base = basename((name ?? '').replaceAll('\\', '/').replace(BIDI, ''))
    .replace(/[\x00-\x1f\x7f/\\:*?"<>|]/g, '_')
    .replace(/^\.+/, '_')
    .slice(-200);
  return base || 'blob';
}

/** At most this many rounds of percent-decoding (`%252e` is `%2e` is `.`). */
const MAX_DECODES = 4;

/**
 * Pure: the name an upload is stored under. The client's name is percent-decoded first (every run
 * of escapes; of one that is not UTF-8, its ASCII escapes), until nothing decodes, then cut to its safe
 * basename: `%2e%2e%2fx.txt` is `x.txt`, so `..` and `/` never survive in any spelling, and the
 * stored name is one `resolveStoredPath` accepts back (it was stored as `%2e%2e%2fx.txt`, and its
 * owner's download, whose URL decodes to `../x.txt`, was a 404).
 */
export function uploadName(name: string | undefined): string {
  let decoded = name ?? '';
  for (let i = 0; i < MAX_DECODES; i++) {
    const next = decoded.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        // Not UTF-8 as a whole: its ASCII escapes (`.`, `/`, `\` among them) still decode one by one.
        return run.replace(/%[0-7][0-9a-f]/gi, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)));
      }
    });
    if (next === decoded) break;
    decoded = next;
  }
  return safeBasename(decoded);
}

/** Whether a string is a well-formed upload id. */
export const isUploadId = (id: string): boolean => ID.test(id);

/**
 * The absolute path of a stored file for a client-supplied `<id>/<basename>` in the owner's
 * folder, or null when it is not of that shape. Pure (no file system access).
 */
export function resolveStoredPath(dataDir: string, path: string, owner: OwnerKey = null): string | null {
  if (typeof path !== 'string' || path.length === 0 || path.length > 512 || path.includes('\0')) return null;
  const parts = path.split('/');
  if (parts.length !== 2 || !ID.test(parts[0]) || safeBasename(parts[1]) !== parts[1]) return null;
  return join(resolve(dataDir), ownerFolder(owner), parts[0], parts[1]);
}

/** The stored file behind a client path for this owner, or null when it is not theirs or gone. */
export async function lookupStoredFile(dataDir: string, path: string, owner: OwnerKey = null): Promise<{ path: string; size: number } | null> {
  const full = resolveStoredPath(dataDir, path, owner);
  if (!full) return null;
  try {
    const s = await stat(full);
    return s.isFile() ? { path: full, size: s.size } : null;
  } catch {
    return null;
  }
}

const MIME: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.csv': 'text/plain; charset=utf-8',
  '.log': 'text/plain; charset=utf-8',
  '.json': 'application/json',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.mp4': 'video/mp4',
};

/** Content type to serve a stored file with; anything active (html, svg, js) is a download. */
export function contentTypeFor(name: string): { type: string; inline: boolean } {
  const type = MIME[extname(name).toLowerCase()];
  return type ? { type, inline: true } : { type: 'application/octet-stream', inline: false };
}
