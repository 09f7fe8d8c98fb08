/**
 * Uploads in PostgreSQL, so every replica reads every upload with no shared folder and no extra
 * service. The bytes live in `gradio_uploads` (migration 121); each replica keeps a local copy
 * (a disk `UploadStore` under its own dataDir) to stream from, written on save and fetched on a
 * first lookup elsewhere. The row is the truth: a lookup whose row is gone (removed, swept on
 * another replica) is not found, whatever copy a replica still has.
 * Takes a pg Pool; knows nothing of what the files are for.
 * @module
 */
import { readFile, rename, rm, writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import type pg from 'pg';
import { resolveStoredPath } from './files.ts';
import { ownerFolder, type OwnerKey } from './ownership.ts';
import { OwnerBudgets, type UploadBudget, type UploadLimits } from './upload-budget.ts';
import { UploadStore, type UploadStorage } from './upload-store.ts';

export class PgUploadStore implements UploadStorage {
  readonly #pool: pg.Pool;
  readonly #local: UploadStore;
  readonly #budgets: OwnerBudgets;

  constructor(pool: pg.Pool, dataDir: string, limits: UploadLimits) {
    this.#pool = pool;
    this.#local = new UploadStore(dataDir, limits);
    // Usage counted across replicas (requests on two replicas at once may overshoot by one request).
    this.#budgets = new OwnerBudgets(limits, (owner) => this.usage(owner));
  }

  withBudget<T>(owner: OwnerKey, task: (budget: UploadBudget) => Promise<T>): Promise<T> {
    return this.#budgets.run(owner, task);
  }

  async save(source: Readable, filename: string | undefined, owner: OwnerKey, budget: UploadBudget, truncated: () => boolean): Promise<string> {
    const path = await this.#local.save(source, filename, owner, budget, truncated);
    try {
      const found = (await this.#local.lookup(path, owner))!;
      await this.#pool.query('INSERT INTO gradio_uploads (owner_folder, path, bytes, size) VALUES ($1, $2, $3, $4)', [
        ownerFolder(owner),
        path,
        await readFile(found.path),
        found.size,
      ]);
    } catch (error) {
      await this.#local.remove(path, owner);
      throw error;
    }
    return path;
  }

  async lookup(path: string, owner: OwnerKey): Promise<{ path: string; size: number } | null> {
    const full = resolveStoredPath(this.#local.root, path, owner);
    if (!full) return null;
    const { rows } = await this.#pool.query<{ size: string }>('SELECT size FROM gradio_uploads WHERE owner_folder = $1 AND path = $2', [ownerFolder(owner), path]);
    if (rows.length === 0) {
      await rm(full, { force: true }); // a copy of a file removed elsewhere
      return null;
    }
    const cached = await this.#local.lookup(path, owner);
    if (cached) return cached;
    // Uploaded through another replica: fetch it once, then serve the local copy.
    const bytes = await this.#pool.query<{ bytes: Buffer }>('SELECT bytes FROM gradio_uploads WHERE owner_folder = $1 AND path = $2', [ownerFolder(owner), path]);
    if (bytes.rows.length === 0) return null;
    await mkdir(dirname(full), { recursive: true, mode: 0o700 });
    const tmp = `${full}.${process.pid}.${Date.now()}.part`;
    await writeFile(tmp, bytes.rows[0].bytes, { mode: 0o600 });
    await rename(tmp, full);
    return { path: full, size: Number(rows[0].size) };
  }

  async remove(path: string, owner: OwnerKey): Promise<void> {
    await this.#pool.query('DELETE FROM gradio_uploads WHERE owner_folder = $1 AND path = $2', [ownerFolder(owner), path]);
    await this.#local.remove(path, owner);
  }

  async usage(owner: OwnerKey): Promise<number> {
    const { rows } = await this.#pool.query<{ total: string | null }>('SELECT sum(size) AS total FROM gradio_uploads WHERE owner_folder = $1', [ownerFolder(owner)]);
    return Number(rows[0].total ?? 0);
  }

  /** Removes rows past the retention that `keep` does not claim (the DELETE is the claim: once across replicas), then local copies. */
  async sweep(maxAgeMs: number, keep: (path: string) => boolean | Promise<boolean>, now = Date.now()): Promise<number> {
    const { rows } = await this.#pool.query<{ owner_folder: string; path: string }>(
      'SELECT owner_folder, path FROM gradio_uploads WHERE created_at < $1',
      [new Date(now - maxAgeMs)],
    );
    let removed = 0;
    for (const row of rows) {
      if (await keep(row.path)) continue;
      const { rowCount } = await this.#pool.query('DELETE FROM gradio_uploads WHERE owner_folder = $1 AND path = $2', [row.owner_folder, row.path]);
      removed += rowCount ?? 0;
    }
    await this.#local.sweep(maxAgeMs, keep, now);
    return removed;
  }
}
