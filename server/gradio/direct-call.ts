/**
 * One unqueued call of an endpoint to its end (the `/run` route and the MCP tools share it):
 * admitted by the endpoint's scheduler like a join, the handler's last value checked against the
 * outputs, an abort (shutdown, lost client) an error rather than partial values.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { GradioContext } from './context.ts';
import type { OwnerKey } from './ownership.ts';
import type { EndpointRequest } from './types.ts';

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === 'object' && Symbol.asyncIterator in value;
}

/** What the caller knows of the request. `log`/`progress` default to no-ops (nowhere to carry them). */
export interface DirectCallInput {
  data: unknown[];
  eventData: unknown;
  identity: unknown;
  owner: OwnerKey;
  headers: EndpointRequest['headers'];
  sessionHash?: string;
  /** The user's cancel (default: never; a synchronous call has no /cancel, only its connection stops it). */
  cancelSignal?: AbortSignal;
  log?: EndpointRequest['log'];
  progress?: EndpointRequest['progress'];
  via?: EndpointRequest['via'];
}

/** Runs the endpoint at `fnIndex`; resolves its final output values. Admission throws 503/429 at once. */
export function callToEnd(ctx: GradioContext, fnIndex: number, input: DirectCallInput, controller: AbortController): Promise<unknown[]> {
  const endpoint = ctx.endpoints[fnIndex];
  const call = async () => {
    const result = endpoint.handler({
      data: input.data,
      eventData: input.eventData,
      identity: input.identity,
      headers: input.headers,
      signal: controller.signal,
      cancelSignal: input.cancelSignal ?? new AbortController().signal,
      sessionHash: input.sessionHash || randomUUID(),
      eventId: randomUUID().replaceAll('-', ''),
      log: input.log ?? (() => {}),
      progress: input.progress ?? (() => {}),
      ...(input.via ? { via: input.via } : {}),
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
    return last;
  };
  return ctx.direct.run(fnIndex, input.owner, controller, call);
}
