/**
 * Deterministic embeddings: a hashed bag of words (with crude stemming), L2-normalised, so cosine
 * similarity measures word overlap. Served by the offline model and used as the local fallback.
 * @module
 */
import { createHash } from 'node:crypto';

export const EMBEDDING_DIMENSIONS = 256;

const STOP_WORDS = new Set(['a', 'an', 'the', 'of', 'to', 'for', 'on', 'in', 'and', 'or', 'is', 'are', 'me', 'my', 'what', 'with', 'by', 'it', 'its', 'be', 'can', 'you', 'please', 'this', 'that']);

/** Lower-case word stems: "Deployments" -> "deploy", "dashboards" -> "dashboard". */
export function stems(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9]+/g) ?? [])
    .filter((w) => !STOP_WORDS.has(w))
    .map((w) => w.replace(/(ments?|ing|ed|s)$/, '') || w);
}

function bucket(word: string): number {
  return createHash('sha256').update(word).digest().readUInt32BE(0) % EMBEDDING_DIMENSIONS;
}

/** The embedding of one text. */
export function hashEmbed(text: string): number[] {
  const v = new Array<number>(EMBEDDING_DIMENSIONS).fill(0);
  for (const s of stems(text)) v[bucket(s)] += 1;
  const norm = Math.hypot(...v);
  return norm === 0 ? v : v.map((x) => x / norm);
}

/** Cosine similarity of two vectors (0 when either is zero). */
export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
