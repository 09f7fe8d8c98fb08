/**
 * The extract cache: parsed text by content hash, so a file is parsed once however often it is
 * attached. Stored in PostgreSQL (table attachment_extracts) rather than under DATA_DIR because
 * every gateway replica shares the database but not necessarily a disk, and because the upload
 * storage may change without the cache caring.
 * @module
 */
import { createHash } from 'node:crypto';
import { findExtract, saveExtract } from '../db/attachment-extracts.ts';
import type { Queryable } from '../db/index.ts';
import type { Extracted } from './extract.ts';
import { isLimitNote } from './pdf-limits.ts';

export interface ExtractCache {
  get(contentHash: string): Promise<Extracted | null>;
  put(contentHash: string, kind: string, extracted: Extracted): Promise<void>;
}

/** SHA-256 of the bytes, hex. */
export function contentHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The cache on the attachment_extracts table. */
export function createPgExtractCache(db: Queryable): ExtractCache {
  return {
    get: (hash) => findExtract(db, hash),
    put: (hash, kind, extracted) => saveExtract(db, hash, kind, extracted),
  };
}

/**
 * Returns the cached extract or runs `extract` and stores its result (failures included, except
 * those of this process's limits: a PDF too large or too slow today is read once a limit is
 * raised). A cache that is down costs a parse, never the turn.
 */
export async function cachedExtract(cache: ExtractCache | undefined, bytes: Uint8Array, kind: string, extract: () => Promise<Extracted>): Promise<Extracted> {
  if (!cache) return extract();
  const hash = contentHash(bytes);
  const hit = await cache.get(hash).catch(() => null);
  if (hit) return hit;
  const fresh = await extract();
  if ('error' in fresh && isLimitNote(fresh.error)) return fresh;
  await cache.put(hash, kind, fresh).catch(() => {});
  return fresh;
}
