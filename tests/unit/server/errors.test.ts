import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AirlockError, ERROR_CODES, isAirlockError, toErrorBody } from '../../../server/errors.ts';

describe('error taxonomy', () => {
  // Both ways, as Fastify's test/internals/errors.test.js: a code the doc names must exist, and a
  // code the server can answer must be in the doc.
  it('lists exactly the codes of the architecture, both ways', () => {
    const architecture = readFileSync('docs/ARCHITECTURE.md', 'utf8');
    const section = architecture.slice(architecture.indexOf('## Error taxonomy'));
    const paragraph = section.split('\n\n')[1];
    const listed = new Set(paragraph.match(/\b[A-Z][A-Z_]{3,}\b/g) ?? []);
    expect([...listed].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('gives every code a 4xx/5xx status and a message', () => {
    for (const [code, entry] of Object.entries(ERROR_CODES)) {
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
      expect(entry.message.length, code).toBeGreaterThan(5);
    }
  });

  it('keeps code, status, details and cause', () => {
    const cause = new Error('root');
    const error = new AirlockError('CONFLICT', 'taken', { details: { field: 'x' }, cause });
    expect(isAirlockError(error)).toBe(true);
    expect(isAirlockError(new Error('x'))).toBe(false);
    expect(error.status).toBe(409);
    expect(error.cause).toBe(cause);
    expect(toErrorBody(error)).toEqual({ error: { code: 'CONFLICT', message: 'taken', details: { field: 'x' } } });
  });
});
