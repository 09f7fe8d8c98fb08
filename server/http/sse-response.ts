/**
 * Starting an SSE response on a Fastify reply: the one set of headers every streaming route sends.
 * @module
 */
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/** Takes the reply over from Fastify and writes the SSE head; returns the raw response to write to. */
export function openSseResponse(reply: FastifyReply, headers: Record<string, string> = {}): ServerResponse {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no', // nginx: pass frames through as they come
    ...headers,
  });
  return res;
}

/**
 * Writes a chunk and puts it on the wire now; false once the response is over. Node (24, the one
 * the project runs on) holds a chunked response's writes corked until the next tick, and during a
 * burst (an answer's tokens handled back to back in microtasks) that tick comes only at the
 * burst's end, so without this the first token would leave with the last one.
 */
export function writeNow(res: ServerResponse, chunk: string): boolean {
  if (res.writableEnded || res.destroyed) return false;
  res.write(chunk);
  while (res.writableCorked > 0) res.uncork();
  return true;
}
