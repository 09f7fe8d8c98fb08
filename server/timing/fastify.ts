/**
 * The meter per HTTP request and the `Server-Timing` header on answers that are not streamed
 * (a REST route, a v1 `stream: false` completion, Gradio's `/run/chat`): a stream's total is not
 * known when its headers leave, so streams carry their timings in their last message instead.
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { currentTimings, serverTimingHeader, withMeter } from './index.ts';

export function registerServerTiming(app: FastifyInstance): void {
  // Callback style: the rest of the request runs inside the meter's context.
  app.addHook('onRequest', (_request, _reply, done) => withMeter(done));
  app.addHook('onSend', async (_request, reply, payload) => {
    const streamed = typeof (payload as { pipe?: unknown } | null)?.pipe === 'function';
    const timings = currentTimings();
    if (!streamed && timings && !reply.hasHeader('server-timing')) reply.header('server-timing', serverTimingHeader(timings));
    return payload;
  });
}
