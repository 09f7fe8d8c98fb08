/**
 * The attachment_extracts table (migration 055): extracted text by content hash. The first writer
 * wins (ON CONFLICT DO NOTHING): two replicas parsing the same file at once store one row.
 * @module
 */
import type { Queryable } from './pool.ts';

export type StoredExtract = { text: string; pages?: number } | { error: string };

/** The stored extract for a content hash, or null. */
export async function findExtract(db: Queryable, contentHash: string): Promise<StoredExtract | null> {
  const { rows } = await db.query<{ text: string | null; pages: number | null; error: string | null }>(
    'SELECT text, pages, error FROM attachment_extracts WHERE content_hash = $1',
    [contentHash],
  );
  const row = rows[0];
  if (!row) return null;
  if (row.text === null) return { error: row.error ?? 'unknown error' };
  return row.pages === null ? { text: row.text } : { text: row.text, pages: row.pages };
}

/** Stores an extract unless one exists for this content. */
export async function saveExtract(db: Queryable, contentHash: string, kind: string, extract: StoredExtract): Promise<void> {
  await db.query(
    `INSERT INTO attachment_extracts (content_hash, kind, text, pages, error) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (content_hash) DO NOTHING`,
    'error' in extract ? [contentHash, kind, null, null, extract.error] : [contentHash, kind, extract.text, extract.pages ?? null, null],
  );
}
