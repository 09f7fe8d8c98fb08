import { describe, expect, it } from 'vitest';
import { toAirlockError } from '../../../server/error-handler.ts';
import { AirlockError } from '../../../server/errors.ts';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('toAirlockError', () => {
  const table: [string, unknown, string, number][] = [
    ['database refused', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'), 'SERVICE_UNAVAILABLE', 503],
    ['database shutting down', withCode('57P01'), 'SERVICE_UNAVAILABLE', 503],
    ['pool connect timeout', new Error('timeout exceeded when trying to connect'), 'SERVICE_UNAVAILABLE', 503],
    ['a query bug', withCode('42703', 'column "x" does not exist'), 'INTERNAL', 500],
    ['an expected error keeps its code', new AirlockError('FORBIDDEN'), 'FORBIDDEN', 403],
  ];
  it.each(table)('%s -> %s', (_name, error, code, status) => {
    const mapped = toAirlockError(error, 'ref-1');
    expect(mapped).toMatchObject({ code, status });
    if (code === 'SERVICE_UNAVAILABLE') {
      expect(mapped.retryable).toBe(true);
      expect(mapped.message).not.toMatch(/5432|ECONN/); // no socket details to clients
    }
  });
});
