/**
 * Every SSE writer puts a frame on the wire when it is written, not at the next tick: during a
 * burst of tokens (handled back to back in microtasks) the next tick comes only at the burst's end,
 * so the first token would leave with the last. A real node:http server and a real client socket.
 */
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeNow } from '../../../../server/http/index.ts';
import { SseWriter } from '../../../../server/gradio/sse-writer.ts';

type Write = (res: ServerResponse, frame: string) => void;

const writers: Array<[string, Write]> = [
  ['Gradio SseWriter', (res, frame) => new SseWriter(res).write(frame)],
  ['writeNow (events, AG-UI, /v1)', (res, frame) => void writeNow(res, frame)],
];

let handle: (res: ServerResponse) => Promise<void>;
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
  void handle(res);
});

beforeAll(() => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)));
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** What Node still holds of the response right after `write`, inside a chain of microtasks. */
async function heldAfter(write: Write): Promise<{ corked: number; buffered: number; received: string }> {
  let held = { corked: -1, buffered: -1 };
  handle = async (res) => {
    for (let i = 0; i < 100; i++) await null; // inside a burst: no tick comes between these
    write(res, 'data: first\n\n');
    held = { corked: res.writableCorked, buffered: res.socket?.writableLength ?? -1 };
    res.end();
  };
  const received = await new Promise<string>((resolve, reject) => {
    request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk));
      res.on('end', () => resolve(body));
    }).on('error', reject).end();
  });
  return { ...held, received };
}

describe('SSE frames leave when written', () => {
  it.each(writers)('%s: nothing of the frame is left corked or buffered in Node', async (_name, write) => {
    expect(await heldAfter(write)).toEqual({ corked: 0, buffered: 0, received: 'data: first\n\n' });
  });

  it('why: a plain res.write stays corked in the response until the next tick', async () => {
    const held = await heldAfter((res, frame) => res.write(frame));
    expect(held.corked).toBe(1);
    expect(held.received).toBe('data: first\n\n');
  });
});
