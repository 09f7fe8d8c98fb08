import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseInput, pathOfNul } from '../../../../server/api/validate.ts';

describe('parseInput', () => {
  const Body = z.object({ title: z.string().min(1), tags: z.array(z.string()).default([]) });

  it('returns the parsed value', () => {
    expect(parseInput(Body, { title: 'x', extra: 1 }, 'body')).toEqual({ title: 'x', tags: [] });
  });

  it('names every bad field with its location', () => {
    try {
      parseInput(Body, { title: '', tags: [1] }, 'body');
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: 'VALIDATION_ERROR', status: 400 });
      expect((error as { details: unknown[] }).details).toEqual([
        { path: 'title', message: expect.any(String), location: 'body' },
        { path: 'tags.0', message: expect.any(String), location: 'body' },
      ]);
    }
  });

  it('refuses NUL characters anywhere, naming the field', () => {
    expect(() => parseInput(Body, { title: 'a\u0000b' }, 'body')).toThrowError(expect.objectContaining({ details: [expect.objectContaining({ path: 'title' })] }));
    expect(pathOfNul({ a: [{ b: 'ok' }, { c: 'x\u0000' }] })).toBe('a.1.c');
    expect(pathOfNul({ ['k\u0000']: 1 })).toBe('k\u0000');
    expect(pathOfNul({ a: 'fine', n: 1, z: null })).toBeNull();
  });
});
