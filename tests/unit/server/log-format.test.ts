import { describe, expect, it } from 'vitest';
import { formatLogLine, loggerOptions } from '../../../server/log-format.ts';

const time = Date.UTC(2026, 0, 2, 7, 2, 13);

describe('formatLogLine', () => {
  const table: Array<[string, object | string, string]> = [
    ['a plain message', { level: 30, time, pid: 1, hostname: 'h', msg: 'Server listening at http://x' }, '07:02:13 INFO  Server listening at http://x\n'],
    [
      'a request',
      { level: 30, time, msg: 'request completed', reqId: 'r', req: { method: 'GET', url: '/api/me' }, res: { statusCode: 200 }, responseTime: 3.4 },
      '07:02:13 INFO  request completed  GET /api/me  200  3ms\n',
    ],
    ['an error', { level: 50, time, msg: 'shutdown failed', err: { type: 'Error', message: 'refused', stack: 'Error: refused\n at x' } }, '07:02:13 ERROR shutdown failed  Error: refused\n'],
    ['extra fields', { level: 40, time, msg: 'slow', signal: 'SIGTERM', detail: 'two words' }, '07:02:13 WARN  slow  signal=SIGTERM detail="two words"\n'],
    ['not JSON', 'plain text', 'plain text\n'],
  ];
  it.each(table)('%s', (_name, record, expected) => {
    expect(formatLogLine(typeof record === 'string' ? record : JSON.stringify(record))).toBe(expected);
  });
});

describe('loggerOptions', () => {
  it('writes JSON (no stream) when stdout is not a terminal, and formats through a stream when it is', () => {
    const serializers = { req: (r: unknown) => r };
    expect(loggerOptions('info', { serializers }, false)).toEqual({ level: 'info', serializers });
    expect(loggerOptions('warn', { serializers }, true)).toMatchObject({ level: 'warn', serializers, stream: { write: expect.any(Function) } });
  });
});
