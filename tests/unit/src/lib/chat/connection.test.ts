import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Connection, sendBlockedReason } from '../../../../../src/lib/chat/connection.svelte.ts';
import { ApiError } from '../../../../../src/lib/chat/errors.ts';
import type { ChatTransport } from '../../../../../src/lib/chat/transport.ts';
import { FakeTransport } from './fakes.ts';

const unreachable = (): Promise<ChatTransport> => Promise.reject(new ApiError('GRADIO_UNREACHABLE', 'down'));

describe('Connection', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('connects: green', async () => {
    const transport = new FakeTransport();
    const c = new Connection({ connect: async () => transport, probeMs: 0 });
    expect(c.status).toBe('connecting');
    await c.start();
    expect(c.status).toBe('connected');
    expect(c.require()).toBe(transport);
  });

  it('GRADIO_UNREACHABLE: retries 5 times 5 s apart, then waits for a manual retry', async () => {
    const connect = vi.fn(unreachable);
    const c = new Connection({ connect, probeMs: 0 });
    await c.start();
    expect(connect).toHaveBeenCalledTimes(1);
    expect(c.status).toBe('retrying');
    expect(() => c.require()).toThrow(/not connected/);

    for (let retry = 1; retry <= 5; retry++) {
      await vi.advanceTimersByTimeAsync(4_999);
      expect(connect).toHaveBeenCalledTimes(retry);
      await vi.advanceTimersByTimeAsync(1);
      expect(connect).toHaveBeenCalledTimes(retry + 1);
      expect(c.retry).toBe(retry);
    }
    expect(c.status).toBe('offline');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(connect).toHaveBeenCalledTimes(6);

    const transport = new FakeTransport();
    connect.mockImplementation(async () => transport);
    await c.reconnect();
    expect(c.status).toBe('connected');
    expect(connect).toHaveBeenCalledTimes(7);
  });

  it('SERVICE_UNAVAILABLE (database down) retries like an outage, says so, and never signs out', async () => {
    const onUnauthorized = vi.fn();
    const connect = vi.fn((): Promise<ChatTransport> => Promise.reject(new ApiError('SERVICE_UNAVAILABLE', 'received status 503')));
    const c = new Connection({ connect, onUnauthorized, probeMs: 0 });
    await c.start();
    expect(c.status).toBe('retrying');
    expect(c.reason).toBe('unavailable');
    const transport = new FakeTransport();
    connect.mockImplementation(async () => transport);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(c.status).toBe('connected');
    expect(onUnauthorized).not.toHaveBeenCalled();
  });

  it('lost("unavailable") from a run turns the dot red with that reason and reconnects', async () => {
    const transport = new FakeTransport();
    const connect = vi.fn(async () => transport);
    const c = new Connection({ connect, probeMs: 0 });
    await c.start();
    c.lost('unavailable');
    expect(c.status).toBe('retrying');
    expect(c.reason).toBe('unavailable');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(c.status).toBe('connected');
    expect(connect).toHaveBeenCalledTimes(2);
  });

  it('a retry that succeeds turns green and resets the count', async () => {
    const transport = new FakeTransport();
    const connect = vi.fn(unreachable);
    const c = new Connection({ connect, probeMs: 0 });
    await c.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(c.retry).toBe(1);
    connect.mockImplementation(async () => transport);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(c.status).toBe('connected');
    expect(c.retry).toBe(0);
  });

  it('lost() (a broken run) drops the transport and starts the retries', async () => {
    const first = new FakeTransport();
    const second = new FakeTransport();
    const connect = vi.fn().mockResolvedValueOnce(first).mockResolvedValueOnce(second);
    const c = new Connection({ connect, probeMs: 0 });
    await c.start();
    c.lost();
    expect(first.closed).toBe(true);
    expect(c.status).toBe('retrying');
    expect(c.transport).toBeNull();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(c.status).toBe('connected');
    expect(c.transport).toBe(second);
  });

  it('the probe notices a gateway that went away while idle', async () => {
    const transport = new FakeTransport();
    const connect = vi.fn().mockResolvedValueOnce(transport).mockImplementation(unreachable);
    const c = new Connection({ connect, probeMs: 10_000 });
    await c.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(c.status).toBe('connected');
    transport.alive = false;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(c.status).toBe('retrying');
    expect(c.transport).toBeNull();
  });

  it('UNAUTHORIZED on connect goes to login and does not retry', async () => {
    const onUnauthorized = vi.fn();
    const connect = vi.fn(() => Promise.reject(new ApiError('UNAUTHORIZED', 'no')));
    const c = new Connection({ connect, onUnauthorized, probeMs: 0 });
    await c.start();
    expect(c.status).toBe('unauthorized');
    expect(onUnauthorized).toHaveBeenCalledOnce();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(connect).toHaveBeenCalledTimes(1);
  });

  it('dispose stops retrying and closes the transport', async () => {
    const connect = vi.fn(unreachable);
    const c = new Connection({ connect, probeMs: 0 });
    await c.start();
    c.dispose();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(connect).toHaveBeenCalledTimes(1);
  });
});

describe('sendBlockedReason', () => {
  it('lets Send work only while connected, and says why not otherwise', () => {
    expect(sendBlockedReason('connected')).toBeNull();
    expect(sendBlockedReason('connecting')).toMatch(/connecting/i);
    expect(sendBlockedReason('retrying')).toMatch(/reconnecting.*stays here/i);
    expect(sendBlockedReason('offline')).toMatch(/reconnecting/i);
  });
});
