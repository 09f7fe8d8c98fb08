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
  if (result.success) return result.data;
  throw new AirlockError('VALIDATION_ERROR', `The request ${location} is not valid.`, {
    details: result.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message, location })),
  });
}
