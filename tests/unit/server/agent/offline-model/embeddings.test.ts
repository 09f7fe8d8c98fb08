import { describe, expect, it } from 'vitest';
import { cosine, EMBEDDING_DIMENSIONS, hashEmbed, stems } from '../../../../../server/agent/offline-model/embeddings.ts';

describe('hashed bag-of-words embeddings', () => {
  it('is deterministic, normalised and of fixed size', () => {
    const v = hashEmbed('Deploy the service');
    expect(v).toHaveLength(EMBEDDING_DIMENSIONS);
    expect(hashEmbed('Deploy the service')).toEqual(v);
    expect(Math.hypot(...v)).toBeCloseTo(1);
  });
  it('stems plurals and -ment', () => {
    expect(stems('Deployments of dashboards')).toEqual(['deploy', 'dashboard']);
  });
  it('ranks related texts above unrelated ones', () => {
    const q = hashEmbed('roll back the latest deployment');
    expect(cosine(q, hashEmbed('List recent deployments of services'))).toBeGreaterThan(cosine(q, hashEmbed('Create a follow-up task')));
  });
  it('gives 0 for an empty text', () => {
    expect(cosine(hashEmbed(''), hashEmbed('x'))).toBe(0);
  });
});
