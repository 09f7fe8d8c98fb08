import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AirlockError, ERROR_CODES, isAirlockError, toErrorBody } from '../../../server/errors.ts';

describe('error taxonomy', () => {
  it('lists every code of the architecture', () => {
    const architecture = readFileSync('docs/ARCHITECTURE.md', 'utf8');
    const section = architecture.slice(architecture.indexOf('## Error taxonomy'));
    const listed = section.split('\n').slice(2, 5).join(' ').match(/[A-Z_]{4,}/g) ?? [];
    expect(listed.length).toBeGreaterThan(5);
    for (const code of listed) expect(ERROR_CODES).toHaveProperty(code);
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
