/**
 * Validation at the edge: parse a request part with its zod schema, or throw VALIDATION_ERROR with
 * field-level details `[{path, message, location}]`.
 * @module
 */
import type { z } from 'zod';
import { AirlockError } from '../errors.ts';

export type RequestPart = 'body' | 'query' | 'params' | 'headers';

/** The parsed value, or a VALIDATION_ERROR naming every bad field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location: RequestPart): z.infer<S> {
  const result = schema.safeParse(value ?? (location === 'body' ? undefined : {}));
  if (result.success) {
    const nul = pathOfNul(result.data);
    if (nul === null) return result.data;
    // PostgreSQL text and jsonb cannot hold U+0000: refuse it here rather than fail in the database.
    throw new AirlockError('VALIDATION_ERROR', `The request ${location} is not valid.`, {
      details: [{ path: nul, message: 'must not contain the NUL character', location }],
    });
  }
  throw new AirlockError('VALIDATION_ERROR', `The request ${location} is not valid.`, {
    details: result.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message, location })),
  });
}

/** The path of the first string (value or key) containing U+0000, else null. */
export function pathOfNul(value: unknown, path: string[] = []): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path.join('.') : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = pathOfNul(value[i], [...path, String(i)]);
      if (found !== null) return found;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key.includes('\u0000')) return [...path, key].join('.');
      const found = pathOfNul(inner, [...path, key]);
      if (found !== null) return found;
    }
  }
  return null;
}
