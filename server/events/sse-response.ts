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
