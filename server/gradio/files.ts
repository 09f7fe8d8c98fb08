/**
 * Content-addressed upload storage: `<dataDir>/<sha256>/<basename>`. Only paths of that exact
 * shape inside `dataDir` resolve, so `/file=` can serve nothing else (no traversal).
 * @module
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { basename, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const HASH_DIR = /^[0-9a-f]{64}$/;

/** A safe file name: the basename, without control or path characters, at most 200 chars. */
export function safeBasename(name: string | undefined): string {
  const base = basename((name ?? '').replaceAll('\\', '/'))
    .replace(/[\x00-\x1f\x7f/\\:*?"<>|]/g, '_')
    .replace(/^\.+/, '_')
    .slice(-200);
  return base || 'blob';
}

/**
 * The absolute path of a stored file for a client-supplied path (absolute `<dataDir>/<sha>/<name>`
 * or relative `<sha>/<name>`), or null when it is not one of ours. Pure (no file system access).
 */
export function resolveStoredPath(dataDir: string, path: string): string | null {
  if (typeof path !== 'string' || path.length === 0 || path.length > 4096 || path.includes('\0')) return null;
  const root = resolve(dataDir);
  const full = isAbsolute(path) ? resolve(path) : resolve(root, path);
  const rel = relative(root, full);
  if (!rel || rel.startsWith('..') || isAbsolute(rel)) return null;
  const parts = rel.split(sep);
  if (parts.length !== 2 || !HASH_DIR.test(parts[0]) || safeBasename(parts[1]) !== parts[1]) return null;
  return full;
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

/** Writes uploads into the data folder. */
export class UploadStore {
  readonly root: string;
  constructor(dataDir: string) {
    this.root = resolve(dataDir);
  }

  /** Streams one file in, hashing as it goes; returns its absolute stored path. `tooLarge()` is checked after the copy. */
  async save(source: Readable, filename: string | undefined, tooLarge: () => boolean): Promise<string> {
    const tmpDir = join(this.root, '.tmp');
    await mkdir(tmpDir, { recursive: true });
    const tmp = join(tmpDir, randomUUID());
    const hash = createHash('sha256');
    const hasher = new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(source, hasher, createWriteStream(tmp));
      if (tooLarge()) throw Object.assign(new Error('File too large'), { tooLarge: true });
      const digest = hash.digest('hex');
      const dir = join(this.root, digest);
      await mkdir(dir, { recursive: true });
      const target = join(dir, safeBasename(filename));
      await rename(tmp, target);
      return target;
    } catch (error) {
      await rm(tmp, { force: true });
      throw error;
    }
  }

  /** Size of a stored file, or null when the path is not ours or does not exist. */
  async lookup(path: string): Promise<{ path: string; size: number } | null> {
    const full = resolveStoredPath(this.root, path);
    if (!full) return null;
    try {
      const s = await stat(full);
      return s.isFile() ? { path: full, size: s.size } : null;
    } catch {
      return null;
    }
  }
}
