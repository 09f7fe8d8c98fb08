/** How pg-boss's 'error' events are logged (issue 30): a lost connection is a short warning. */
import { describe, expect, it } from 'vitest';
import { jobQueueLogEntry } from '../../../../server/v1/job-queue.ts';

describe('jobQueueLogEntry', () => {
  it('a lost connection: a warning with its message and code, never the pg client pg-pool attaches', () => {
    const err = Object.assign(new Error('Connection terminated unexpectedly'), { client: { connectionParameters: { user: 'u' } } });
    expect(jobQueueLogEntry(err)).toEqual({ level: 'warn', obj: { err: { message: 'Connection terminated unexpectedly', code: undefined } }, msg: 'job queue: database unavailable' });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(jobQueueLogEntry(refused).obj).toEqual({ err: { message: refused.message, code: 'ECONNREFUSED' } });
  });

  it('anything else: an error, whole', () => {
    const err = new Error('relation "job" does not exist');
    expect(jobQueueLogEntry(err)).toEqual({ level: 'error', obj: { err }, msg: 'job queue error' });
  });
});
