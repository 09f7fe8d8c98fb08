import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../../../server/db/unavailable.ts';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  const unavailable: [string, unknown][] = [
    ['connection refused (proxy or server gone)', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['connection reset', withCode('ECONNRESET')],
    ['socket timeout', withCode('ETIMEDOUT')],
    ['host unreachable', withCode('EHOSTUNREACH')],
    ['DNS failure', withCode('ENOTFOUND')],
    ['Unix socket gone', withCode('ENOENT', 'connect ENOENT /data/pg/.s.PGSQL.5432')],
    ['SQLSTATE 08006 connection_failure', withCode('08006')],
    ['SQLSTATE 08001 unable to connect', withCode('08001')],
    ['57P01 admin_shutdown', withCode('57P01', 'terminating connection due to administrator command')],
    ['57P02 crash_shutdown', withCode('57P02')],
    ['57P03 cannot_connect_now', withCode('57P03', 'the database system is starting up')],
    ['53300 too_many_connections', withCode('53300')],
    ['53100 disk_full', withCode('53100')],
    ['pg: connection terminated', new Error('Connection terminated unexpectedly')],
    ['pg: connection terminated due to timeout', new Error('Connection terminated due to connection timeout')],
    ['pg-pool: connect timeout', new Error('timeout exceeded when trying to connect')],
    ['pg: query read timeout', new Error('Query read timeout')],
    ['pg: broken client', new Error('Client has encountered a connection error and is not queryable')],
    ['pool ended (shutdown)', new Error('Cannot use a pool after calling end on the pool')],
    ['wrapped in a cause', new Error('load failed', { cause: withCode('ECONNREFUSED') })],
    ['AggregateError of IPv4 and IPv6 refusals', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], '')],
  ];
  const available: [string, unknown][] = [
    ['unique violation', withCode('23505', 'duplicate key value')],
    ['syntax error', withCode('42601')],
    ['invalid uuid text', withCode('22P02')],
    ['NUL in text', withCode('22021')],
    ['a missing file that is not a socket', withCode('ENOENT', "ENOENT: no such file or directory, open '/data/uploads/x'")],
    ['a plain bug', new TypeError('x is not a function')],
    ['null', null],
    ['a string', 'ECONNREFUSED'],
    ['a numeric code', { code: 8006 }],
  ];

  it.each(unavailable)('%s -> unavailable', (_name, error) => expect(isDatabaseUnavailable(error)).toBe(true));
  it.each(available)('%s -> not unavailable', (_name, error) => expect(isDatabaseUnavailable(error)).toBe(false));

  it('stops on a cause cycle', () => {
    const a: Error & { cause?: unknown } = new Error('a');
    a.cause = a;
    expect(isDatabaseUnavailable(a)).toBe(false);
  });
});
