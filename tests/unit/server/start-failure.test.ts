import { describe, expect, it } from 'vitest';
import { describeStartFailure, redactDatabaseUrl } from '../../../server/start-failure.ts';

const ctx = { host: '127.0.0.1', port: 3000 };
const external = { ...ctx, databaseUrl: 'postgres://app:s3cret@db.internal:5432/airlock' };
const named = (name: string, message: string) => Object.assign(new Error(message), { name });
const errno = (code: string, extra: object = {}) => Object.assign(new Error(`${code} happened`), { code, ...extra });

describe('describeStartFailure', () => {
  const table: Array<[string, unknown, typeof ctx & { databaseUrl?: string }, RegExp]> = [
    ['port in use', errno('EADDRINUSE', { syscall: 'listen' }), ctx, /^Airlock cannot start: port 3000 on 127\.0\.0\.1 is already in use .* set PORT/],
    ['privileged port', errno('EACCES', { syscall: 'listen' }), { ...ctx, port: 80 }, /port 80 needs privileges/],
    ['foreign host', errno('EADDRNOTAVAIL', { syscall: 'listen' }), { ...ctx, host: '10.9.9.9' }, /HOST=10\.9\.9\.9 is not an address/],
    ['data folder in use', named('DataDirInUseError', 'the data folder /d is in use by another Airlock process (pid 7)'), ctx, /^Airlock cannot start: the data folder \/d is in use .*pid 7/],
    ['bad config', named('ConfigError', 'Invalid configuration:\n  PORT: too big'), ctx, /^Airlock cannot start: Invalid configuration/],
    ['bad policy file', named('PolicyFileError', 'the policy file /etc/p.yaml line 4: tool_rules.exec: expected one of allow, caution, require_approval, deny. Fix it or unset POLICY_FILE.'), ctx, /^Airlock cannot start: the policy file \/etc\/p\.yaml line 4: tool_rules\.exec/],
    ['wrong KEK', named('KeyCipherError', 'signing key k was sealed with another key-encryption key'), ctx, /set|sealed with another/],
    ['database down', errno('ECONNREFUSED'), external, /the database postgres:\/\/app@db\.internal:5432\/airlock cannot be reached .*Check DATABASE_URL/],
    ['database password', errno('28P01'), external, /refused the credentials/],
    ['no such database', errno('3D000'), external, /has no such database/],
    ['embedded database', new Error('the embedded database did not start: FATAL: could not create lock file'), ctx, /^Airlock cannot start: the embedded database did not start: FATAL/],
    ['undefined', undefined, ctx, /^Airlock cannot start: an error without a message \(undefined\)$/],
    ['a string', 'boom', ctx, /^Airlock cannot start: boom$/],
    ['an object', { reason: 1 }, ctx, /an error without a message \(\{"reason":1\}\)/],
  ];
  it.each(table)('%s', (_name, error, context, expected) => {
    const line = describeStartFailure(error, context);
    expect(line).toMatch(expected);
    expect(line).not.toContain('s3cret');
    if (error !== undefined) expect(line).not.toContain('undefined');
    expect(line).not.toContain('\n    at '); // no stack trace
  });

  it('never shows a database password, even of a socket URL', () => {
    expect(redactDatabaseUrl('postgres://a:pw@localhost:5432/x?host=%2Frun%2Fpg')).toBe('postgres://a@/run/pg/x');
    expect(redactDatabaseUrl('not a url')).toBe('DATABASE_URL (not a valid URL)');
  });
});
