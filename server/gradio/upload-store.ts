/**
 * Writes uploads into `<dataDir>/<owner folder>/<random id>/<basename>` (folders 0700, files
 * 0600), enforces the per-file, per-request and per-owner byte limits while streaming, and sweeps
 * files past their retention unless the app says they are still referenced.
 * @module
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isUploadId, lookupStoredFile, uploadName } from './files.ts';
import { ownerFolder, type OwnerKey } from './ownership.ts';
import { OwnerBudgets, type UploadBudget, type UploadLimits } from './upload-budget.ts';

/** Why an upload was refused; the route maps each to a 413. */
export class UploadLimitError extends Error {
  constructor(readonly limit: 'file' | 'request' | 'quota') {
    super(`upload ${limit} limit`);
  }
}

export type { UploadBudget } from './upload-budget.ts';

/**
 * What the upload routes, the retention sweep and the app ask of upload storage. Two
 * implementations pass one contract suite (tests/helpers/upload-contract.ts): this folder on
 * disk (`UploadStore`, one process) and PostgreSQL (`PgUploadStore`, every replica reads every
 * upload). Paths are the client's `<id>/<basename>`; `lookup` gives a local file to serve.
 */
export interface UploadStorage {
  withBudget<T>(owner: OwnerKey, task: (budget: UploadBudget) => Promise<T>): Promise<T>;
  save(source: Readable, filename: string | undefined, owner: OwnerKey, budget: UploadBudget, truncated: () => boolean): Promise<string>;
  lookup(path: string, owner: OwnerKey): Promise<{ path: string; size: number } | null>;
  remove(path: string, owner: OwnerKey): Promise<void>;
  usage(owner: OwnerKey): Promise<number>;
  sweep(maxAgeMs: number, keep: (path: string) => boolean | Promise<boolean>, now?: number): Promise<number>;
}

/** Upload storage of one plugin instance, in a folder on disk. */
export class UploadStore implements UploadStorage {
  readonly root: string;
  readonly #budgets: OwnerBudgets;

  constructor(dataDir: string, limits: UploadLimits) {
    this.root = resolve(dataDir);
    this.#budgets = new OwnerBudgets(limits, (owner) => this.usage(owner));
  }

  /** Runs one upload request for an owner with its byte budget, after that owner's previous ones. */
  withBudget<T>(owner: OwnerKey, task: (budget: UploadBudget) => Promise<T>): Promise<T> {
    return this.#budgets.run(owner, task);
  }

  /**
   * Streams one file in and returns the client path `<id>/<basename>`. Stops at the first byte
   * past the budget (UploadLimitError); `truncated()` reports multipart's per-file limit.
   */
  async save(source: Readable, filename: string | undefined, owner: OwnerKey, budget: UploadBudget, truncated: () => boolean): Promise<string> {
    const tmpDir = join(this.root, '.tmp');
    await this.#mkdir(tmpDir);
    const tmp = join(tmpDir, randomUUID());
    let written = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        written += chunk.length;
        if (written > budget.request) return done(new UploadLimitError('request'));
        if (written > budget.quota) return done(new UploadLimitError('quota'));
        done(null, chunk);
      },
    });
    try {
      await pipeline(source, meter, createWriteStream(tmp, { mode: 0o600 }));
      if (truncated()) throw new UploadLimitError('file');
      budget.request -= written;
      budget.quota -= written;
      const id = randomBytes(16).toString('hex');
      const name = uploadName(filename);
      const dir = join(this.root, ownerFolder(owner), id);
      await this.#mkdir(dir);
      await rename(tmp, join(dir, name));
      return `${id}/${name}`;
    } catch (error) {
      source.resume();
      await rm(tmp, { force: true });
      throw error;
    }
  }

  /** The stored file behind a client path, for its owner only. */
  lookup(path: string, owner: OwnerKey): Promise<{ path: string; size: number } | null> {
    return lookupStoredFile(this.root, path, owner);
  }

  /** Removes one of the owner's files with its id folder (a refused request's earlier parts). */
  async remove(path: string, owner: OwnerKey): Promise<void> {
    const found = await this.lookup(path, owner);
    if (!found) return;
    await rm(found.path, { force: true });
    await rmdir(join(found.path, '..')).catch(() => {});
  }

  /** Bytes an owner keeps stored. */
  async usage(owner: OwnerKey): Promise<number> {
    let total = 0;
    for (const file of await this.#files(join(this.root, ownerFolder(owner)))) total += file.size;
    return total;
  }

  /**
   * Removes files modified more than `maxAgeMs` ago unless `keep(clientPath)` says they are still
   * referenced; also leftovers of interrupted uploads. Returns how many files it removed.
   */
  async sweep(maxAgeMs: number, keep: (path: string) => boolean | Promise<boolean>, now = Date.now()): Promise<number> {
    let removed = 0;
    for (const tmp of await this.#files(join(this.root, '.tmp'), false)) {
      if (now - tmp.mtimeMs > Math.max(maxAgeMs, 3_600_000)) await rm(tmp.full, { force: true });
    }
    for (const folder of await readdir(this.root).catch(() => [] as string[])) {
      if (folder === '.tmp') continue;
      for (const file of await this.#files(join(this.root, folder))) {
        if (now - file.mtimeMs <= maxAgeMs || (await keep(file.clientPath))) continue;
        await rm(file.full, { force: true });
        await rmdir(join(this.root, folder, file.clientPath.split('/')[0])).catch(() => {});
        removed++;
      }
    }
    return removed;
  }

  /** Files `<folder>/<id>/<name>` (or directly in `folder` when `nested` is false). */
  async #files(folder: string, nested = true): Promise<{ full: string; clientPath: string; size: number; mtimeMs: number }[]> {
    const found: { full: string; clientPath: string; size: number; mtimeMs: number }[] = [];
    const entries = await readdir(folder).catch(() => [] as string[]);
    for (const entry of entries) {
      const names = nested ? (isUploadId(entry) ? await readdir(join(folder, entry)).catch(() => [] as string[]) : []) : [''];
      for (const name of names) {
        const full = nested ? join(folder, entry, name) : join(folder, entry);
        const s = await stat(full).catch(() => null);
        if (s?.isFile()) found.push({ full, clientPath: nested ? `${entry}/${name}` : entry, size: s.size, mtimeMs: s.mtimeMs });
      }
    }
    return found;
  }

  /** Creates folders private to the server's user (and tightens the root, which may pre-exist). */
  async #mkdir(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(this.root, 0o700);
  }
}
