import { describe, expect, it } from 'vitest';
import { createEmbedder, localEmbedder } from '../../../../server/agent/embedder.ts';

function fakeFetch(answers: Array<'ok' | 'fail'>) {
  let calls = 0;
  const fetch = (async (_url: string, init: RequestInit) => {
    const answer = answers[calls++] ?? 'ok';
    if (answer === 'fail') return new Response('{}', { status: 404 });
    const input = JSON.parse(String(init.body)).input as string[];
    // Out of order on purpose: the embedder sorts by index.
    return new Response(JSON.stringify({ data: input.map((_, index) => ({ index, embedding: [index, 7] })).reverse() }));
  }) as unknown as typeof globalThis.fetch;
  return { fetch, calls: () => calls };
}

const options = { baseUrl: 'http://m.test/v1/', apiKey: 'k', model: 'm' };

describe('createEmbedder', () => {
  it('uses the endpoint\'s embeddings in input order', async () => {
    const f = fakeFetch(['ok']);
    expect(await createEmbedder({ ...options, fetch: f.fetch })(['a', 'b'])).toEqual([[0, 7], [1, 7]]);
  });

  it('switches to local embeddings for good when the first request fails', async () => {
    const f = fakeFetch(['fail']);
    const embed = createEmbedder({ ...options, fetch: f.fetch });
    expect(await embed(['deploy'])).toEqual(await localEmbedder(['deploy']));
    await embed(['again']);
    expect(f.calls()).toBe(1);
  });

  it('throws (never mixes vector spaces) when the endpoint fails after working', async () => {
    const f = fakeFetch(['ok', 'fail']);
    const embed = createEmbedder({ ...options, fetch: f.fetch });
    await embed(['a']);
    await expect(embed(['b'])).rejects.toThrow('HTTP 404');
  });
});
