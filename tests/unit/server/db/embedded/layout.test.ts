import { describe, expect, it } from 'vitest';
import { connectionUrl, MAX_SOCKET_PATH_BYTES, socketFits, socketPathOf } from '../../../../../server/db/embedded/layout.ts';

describe('embedded layout', () => {
  it('uses the Unix socket only where its path fits sun_path', () => {
    const base = '/tmp/';
    const fixed = Buffer.byteLength(socketPathOf(base + 'x')) - 1; // every byte but the folder name's
    const longest = MAX_SOCKET_PATH_BYTES - fixed; // the longest folder name that still fits
    expect(socketFits(base + 'x'.repeat(longest))).toBe(true);
    expect(socketFits(base + 'x'.repeat(longest + 1))).toBe(false);
    expect(socketFits('/tmp/' + 'é'.repeat(longest))).toBe(false); // bytes, not characters
  });

  it('builds socket and loopback URLs that pg reads back', () => {
    const args = { user: 'airlock_app', password: 'p', database: 'airlock', clusterDir: '/d', port: 5432 };
    expect(connectionUrl({ ...args, socket: true })).toBe('postgres://airlock_app:p@localhost:5432/airlock?host=%2Fd%2Frun');
    expect(connectionUrl({ ...args, socket: false, port: 41000 })).toBe('postgres://airlock_app:p@127.0.0.1:41000/airlock');
  });
});
