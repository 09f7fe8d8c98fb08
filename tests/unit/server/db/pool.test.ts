/**
 * The pool's guard against a lost connection (issue 30): a client that emits 'error' while checked
 * out must find a listener (else node ends the process), and a client is handed back once however
 * many paths try. No server: the pool never connects here.
 */
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { guardClients, releaseOnce } from '../../../../server/db/pool.ts';

const lost = () => new Error('Connection terminated unexpectedly');

describe('guardClients', () => {
  it('every client the pool connects listens for errors for its whole life', () => {
    const pool = guardClients(new pg.Pool({ max: 1 }));
    const client = new EventEmitter();
    expect(() => client.emit('error', lost())).toThrow(/terminated/); // what a checked-out client did
    pool.emit('connect', client);
    expect(() => client.emit('error', lost())).not.toThrow();
    expect(() => client.emit('error', lost())).not.toThrow(); // the socket's error, then its end
  });

  it("an idle client's error reaches the pool's listener, not the process", () => {
    const pool = guardClients(new pg.Pool({ max: 1 }));
    expect(() => pool.emit('error', lost())).not.toThrow();
  });
});

describe('releaseOnce', () => {
  it('hands the client back once, with the first reason', () => {
    const calls: unknown[] = [];
    const client = { release: (error?: unknown) => calls.push(error) } as unknown as pg.PoolClient;
    const release = releaseOnce(client);
    const error = lost();
    release(error);
    release(true);
    release();
    expect(calls).toEqual([error]);
  });
});
