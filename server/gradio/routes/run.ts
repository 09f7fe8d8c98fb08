/**
 * `POST /gradio_api/run/{api_name}`: the unqueued call (the JS client uses it when the queue is
 * off). Same body as a join; replies `{data}` with the final values, or 500 with the error payload.
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { identityOf, ownerOf } from '../auth.ts';
import type { GradioContext } from '../context.ts';
import { callToEnd } from '../direct-call.ts';
import { EndpointError, isGradioError, RequestRejectedError } from '../errors.ts';
import { describeError } from '../event-runner.ts';
import { isRejection, normalizeInputs, parseEnvelope } from '../validate.ts';

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
    const started = performance.now();
    try {
      const input = { data, eventData: envelope.eventData, identity: identityOf(request), owner: ownerOf(request, ctx.options.identityKey), headers: request.headers, sessionHash: envelope.sessionHash };
      const last = await callToEnd(ctx, fnIndex, input, controller);
      const duration = (performance.now() - started) / 1000;
      return { data: last, is_generating: false, duration, average_duration: duration, render_config: null, changed_state_ids: [] };
    } catch (error) {
      if (isGradioError(error)) throw error;
      if (!controller.signal.aborted) request.log.warn({ err: error, endpoint: endpoint.apiName }, 'gradio handler failed');
      const { title, message } = describeError(error);
      const status = error instanceof EndpointError ? error.status : 500;
      return reply.status(status).send({ error: message, duration: null, visible: true, title });
    }
  });
}
