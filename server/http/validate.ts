/**
 * Validation at the edge: parse a request part with its zod schema, or throw VALIDATION_ERROR with
 * field-level details `[{path, message, location}]`. Besides the schema, every part is refused
 * when it holds U+0000 (PostgreSQL text and jsonb cannot store it) or nests deeper than
 * MAX_NESTING (PostgreSQL's jsonb parser runs out of stack long before our own limits), so neither
 * reaches the database as a server error. Both walks are iterative: a 100,000-deep body cannot
 * overflow our stack either.
 * @module
 */
import type { z } from 'zod';
import { AirlockError } from '../errors.ts';

export type RequestPart = 'body' | 'query' | 'params' | 'headers';

/** Deepest nesting of arrays/objects a request may carry (metadata is documented as shallow). */
export const MAX_NESTING = 64;

/** The parsed value, or a VALIDATION_ERROR naming every bad field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location: RequestPart): z.infer<S> {
  const input = value ?? (location === 'body' ? undefined : {});
  const tooDeep = pathDeeperThan(input, MAX_NESTING);
  if (tooDeep !== null) throw invalid(location, tooDeep, `must not nest deeper than ${MAX_NESTING} levels`);
  const result = schema.safeParse(input);
  if (result.success) {
    const nul = pathOfNul(result.data);
    if (nul === null) return result.data;
    throw invalid(location, nul, 'must not contain the NUL character');
  }
  throw new AirlockError('VALIDATION_ERROR', `The request ${location} is not valid.`, {
    details: result.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message, location })),
  });
}

function invalid(location: RequestPart, path: string, message: string): AirlockError {
  return new AirlockError('VALIDATION_ERROR', `The request ${location} is not valid.`, { details: [{ path, message, location }] });
}

/** A node of an iterative walk; the path is rebuilt from parents only when it is needed. */
interface Visit {
  value: unknown;
  key: string | null;
  parent: Visit | null;
  depth: number;
}

function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let v: Visit | null = visit; v && v.key !== null; v = v.parent) keys.push(v.key);
  return keys.reverse().join('.');
}

function entriesOf(value: object): [string, unknown][] {
  return Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
}

/** The path of the first string (value or key) containing U+0000, else null. */
export function pathOfNul(value: unknown): string | null {
  const stack: Visit[] = [{ value, key: null, parent: null, depth: 0 }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    if (typeof visit.value === 'string') {
      if (visit.value.includes('\u0000')) return pathOf(visit);
      continue;
    }
    if (!visit.value || typeof visit.value !== 'object') continue;
    const entries = entriesOf(visit.value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, inner] = entries[i];
      const child = { value: inner, key, parent: visit, depth: visit.depth + 1 };
      if (key.includes('\u0000')) return pathOf(child);
      stack.push(child);
    }
  }
  return null;
}

/** The path (cut at `max`) of a container nested deeper than `max` levels, else null. */
export function pathDeeperThan(value: unknown, max: number): string | null {
  const stack: Visit[] = [{ value, key: null, parent: null, depth: 0 }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    if (!visit.value || typeof visit.value !== 'object') continue;
    if (visit.depth >= max) return pathOf(visit) || '(root)';
    for (const [key, inner] of entriesOf(visit.value)) {
      if (inner && typeof inner === 'object') stack.push({ value: inner, key, parent: visit, depth: visit.depth + 1 });
    }
  }
  return null;
}
