/**
 * Opaque paging cursors: base64url(JSON). Clients pass them back untouched; a tampered or foreign
 * cursor is a VALIDATION_ERROR, never a server error.
 * @module
 */
import type { z } from 'zod';
import { AirlockError } from '../errors.ts';

export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** Decodes and validates a cursor against `schema`; throws VALIDATION_ERROR when it does not fit. */
export function decodeCursor<S extends z.ZodType>(cursor: string, schema: S, field = 'cursor'): z.infer<S> {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const result = schema.safeParse(decoded);
  if (!result.success) {
    throw new AirlockError('VALIDATION_ERROR', 'The cursor is not valid.', {
      details: [{ path: field, message: 'not a cursor this endpoint issued', location: 'query' }],
    });
  }
  return result.data;
}
