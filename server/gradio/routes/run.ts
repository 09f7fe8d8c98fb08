/**
 * `POST /gradio_api/run/{api_name}`: the unqueued call (the JS client uses it when the queue is
 * off). Same body as a join; replies `{data}` with the final values, or 500 with the error payload.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { identityOf, ownerOf } from '../auth.ts';
import type { GradioContext } from '../context.ts';
import { isGradioError, RequestRejectedError } from '../errors.ts';
import { describeError } from '../event-runner.ts';
import { isRejection, normalizeInputs, parseEnvelope } from '../validate.ts';

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === 'object' && Symbol.asyncIterator in value;
}

/** Registers the run route. */
export function registerRunRoutes(app: FastifyInstance, ctx: GradioContext): void {
  app.post('/gradio_api/run/:api_name', async (request, reply) => {
    const { api_name: apiName } = request.params as { api_name: string };
    const fnIndex = ctx.endpoints.findIndex((e) => e.apiName === apiName.replace(/^\//, ''));
    const endpoint = ctx.endpoints[fnIndex];
    if (!endpoint) throw new RequestRejectedError(404, `No endpoint named /${apiName}.`);
    const envelope = parseEnvelope(request.body, false);
    if (isRejection(envelope)) throw new RequestRejectedError(envelope.status, envelope.detail);
    const data = normalizeInputs(endpoint, envelope.data);
    if (isRejection(data)) throw new RequestRejectedError(data.status, data.detail);

    const controller = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) controller.abort(new Error('The client disconnected.'));
    });
    const owner = ownerOf(request, ctx.options.identityKey);
    const call = async () => {
      const started = performance.now();
      const result = endpoint.handler({
        data,
        eventData: envelope.eventData,
        identity: identityOf(request),
        headers: request.headers,
        signal: controller.signal,
        sessionHash: envelope.sessionHash || randomUUID(),
        eventId: randomUUID().replaceAll('-', ''),
        // One JSON reply: nowhere to carry side messages (Gradio's /run drops them too).
        log: () => {},
        progress: () => {},
      });
      let last: unknown = null;
      if (isAsyncIterable(result)) {
        for await (const value of result) {
          last = value;
          if (controller.signal.aborted) break;
        }
      } else last = await result;
      // Stopped (shutdown or a lost client): an error, never the partial values as a success.
      if (controller.signal.aborted) throw controller.signal.reason;
      if (!Array.isArray(last) || last.length !== endpoint.outputs.length) {
        throw new Error(`The endpoint "${endpoint.apiName}" must produce an array of ${endpoint.outputs.length} output value(s).`);
      }
      const duration = (performance.now() - started) / 1000;
      return { data: last, is_generating: false, duration, average_duration: duration, render_config: null, changed_state_ids: [] };
    };
    // Admission throws 503/429 at once, as a join would; an admitted call may wait for a slot.
    const admitted = ctx.direct.run(fnIndex, owner, controller, call);
    try {
      return await admitted;
    } catch (error) {
      if (isGradioError(error)) throw error;
      if (!controller.signal.aborted) request.log.warn({ err: error, endpoint: endpoint.apiName }, 'gradio handler failed');
      const { title, message } = describeError(error);
      return reply.status(500).send({ error: message, duration: null, visible: true, title });
    }
  });
}
