import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { McpConnection, retryDelayMs } from '../../../../../server/agent/mcp/connection.ts';
import { parseServerEntry } from '../../../../../server/agent/mcp/tools-file.ts';

describe('retryDelayMs — backoff for a down server', () => {
  const rows: Array<[attempt: number, ms: number]> = [
    [0, 1000],
    [1, 2000],
    [2, 4000],
    [4, 16_000],
    [5, 30_000],
    [20, 30_000],
    [-1, 1000],
  ];
  it.each(rows)('attempt %d waits %d ms', (attempt, ms) => {
    expect(retryDelayMs(attempt)).toBe(ms);
  });
});

describe('McpConnection health while retrying', () => {
  it('a server that failed stays "down" through its retries; only the first attempt is "connecting"', async () => {
    // A real HTTP endpoint that records the connection's health as each attempt reaches it, then
    // drops the socket (a server that accepts and dies).
    const healthDuringAttempt: string[] = [];
    let connection: McpConnection | undefined;
    const endpoint = createServer((request) => {
      healthDuringAttempt.push(connection!.health);
      request.socket.destroy();
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const { port } = endpoint.address() as AddressInfo;
    const healthAtChange: string[] = [];
    const entry = parseServerEntry({ name: 'flaky', url: `http://127.0.0.1:${port}/mcp` }, 0);
    if (!entry.ok) throw new Error(entry.error);
    connection = new McpConnection(entry.server, {
      timeoutMs: 2000,
      backoff: () => 5,
      onChange: () => healthAtChange.push(connection!.health),
    });
    expect(connection.health).toBe('connecting');
    await connection.connect();
    await vi.waitFor(() => expect(healthAtChange.length).toBeGreaterThanOrEqual(4), { timeout: 10_000, interval: 5 });
    await connection.close();
    endpoint.close();
    expect(healthDuringAttempt[0]).toBe('connecting');
    expect(new Set(healthDuringAttempt.slice(1))).toEqual(new Set(['down']));
    expect(new Set(healthAtChange)).toEqual(new Set(['down']));
    expect(connection.lastError).toMatch(/connect failed/);
  });
});
