import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MAX_NESTING, parseInput, pathDeeperThan, pathOfNul } from '../../../../server/http/validate.ts';

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

describe('nesting limits', () => {
  const nested = (depth: number): unknown => {
    let value: unknown = 'leaf';
    for (let i = 0; i < depth; i++) value = { a: value };
    return value;
  };
  const Loose = z.object({ metadata: z.record(z.string(), z.unknown()) });

  it.each([
    [MAX_NESTING - 1, null],
    [MAX_NESTING, null],
    [MAX_NESTING + 1, 'a'],
  ])('a value nested %i deep -> %s', (depth, expected) => {
    const found = pathDeeperThan(nested(depth), MAX_NESTING);
    if (expected === null) expect(found).toBeNull();
    else expect(found).toMatch(/^a(\.a)*$/);
  });

  it('refuses 5,000 and 100,000 levels of metadata with VALIDATION_ERROR, without a RangeError', () => {
    for (const depth of [5_000, 100_000]) {
      let caught: unknown;
      try {
        parseInput(Loose, { metadata: nested(depth) }, 'body');
      } catch (error) {
        caught = error;
      }
      expect(caught).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ message: expect.stringContaining('nest') }] });
      expect(pathOfNul(nested(depth))).toBeNull();
    }
  });
});
