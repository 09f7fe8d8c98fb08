import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../../../../server/api/cursor.ts';

const Schema = z.object({ u: z.string(), i: z.uuid(), r: z.string().optional() });

describe('paging cursors', () => {
  it('round-trips exact values (microsecond timestamps, float ranks)', () => {
    const value = { u: '2026-12-02 13:29:23.123456+00', i: '0b7c0c4e-4bd4-4f3a-9a43-1f0f7a0d1c2e', r: '0.0607927' };
    const cursor = encodeCursor(value);
    expect(cursor).toMatch(/^[\w-]+$/); // URL-safe, no padding
    expect(decodeCursor(cursor, Schema)).toEqual(value);
  });

  it('turns tampered, foreign or garbage cursors into VALIDATION_ERROR', () => {
    for (const bad of ['', 'nonsense', encodeCursor({ u: 'x' }), encodeCursor([1, 2]), encodeCursor('str'), '%%%']) {
      expect(() => decodeCursor(bad, Schema)).toThrowError(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
    }
  });
});
