/**
 * The embedder for tool selection: the model endpoint's `/embeddings` (the offline model serves
 * deterministic ones), falling back for good to the local hashed bag of words when the endpoint's
 * first answer fails, so a chat-only endpoint costs one failed request, not one per turn.
 * @module
 */
import { hashEmbed } from './offline-model/embeddings.ts';
import type { Embedder } from './select-tools.ts';

export interface EmbedderOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Local embeddings, no network. */
export const localEmbedder: Embedder = async (texts) => texts.map(hashEmbed);

/** Remote embeddings with a permanent switch to local ones after the first failure. */
export function createEmbedder(options: EmbedderOptions): Embedder {
  const doFetch = options.fetch ?? fetch;
  // unknown -> remote after a first success, local after a first failure. Once remote, failures
  // throw (the selection then keeps its keyword choice) so cached vectors never mix two spaces.
  let mode: 'unknown' | 'remote' | 'local' = 'unknown';
  return async (texts) => {
    if (mode !== 'local') {
      try {
        const response = await doFetch(`${options.baseUrl.replace(/\/+$/, '')}/embeddings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${options.apiKey}` },
          body: JSON.stringify({ model: options.model, input: texts }),
          signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
        });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const body = (await response.json()) as { data: Array<{ index: number; embedding: number[] }> };
        mode = 'remote';
        return [...body.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
      } catch (error) {
        if (mode === 'remote') throw error;
        mode = 'local';
      }
    }
    return localEmbedder(texts);
  };
}
