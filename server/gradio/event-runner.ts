/**
 * Runs one event's handler and turns what it yields into session messages: process_starts, the
 * first values whole, then diffs, then exactly one terminal process_completed (success, error,
 * cancel or shutdown), whatever the handler does afterwards.
 * @module
 */
import { diff, snapshot } from './diff.ts';
import { encodeDiffFrame, encodeFrame, logMessage, processCompleted, processFailed, processGenerating, processStarts, progressMessage } from './encode.ts';
import type { BusMessage } from './session-bus.ts';
import type { EndpointDefinition, EndpointRequest } from './types.ts';

/** Where the runner reports a handler failure (Fastify's logger fits). */
export interface RunLogger {
  warn(obj: object, msg?: string): void;
}

/** Generic text for errors marked `expose: false`. */
export const GENERIC_ERROR_MESSAGE = 'An error occurred while processing the request.';

/** Title and message of an error completion: `error.title ?? 'Error'`, hidden when `expose === false`. */
export function describeError(error: unknown): { title: string; message: string } {
  const e = (error ?? {}) as { title?: unknown; expose?: unknown; message?: unknown };
  const title = typeof e.title === 'string' && e.title ? e.title : 'Error';
  if (e.expose === false) return { title, message: GENERIC_ERROR_MESSAGE };
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : String(error);
  return { title, message: message || GENERIC_ERROR_MESSAGE };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === 'object' && Symbol.asyncIterator in value;
}

/** One event's run. `send` receives frames in order; the last one is terminal. */
export class EventRun {
  readonly controller = new AbortController();
  /** Fired by cancel and shutdown only (EndpointRequest.cancelSignal). */
  readonly cancelController = new AbortController();
  readonly request: EndpointRequest;
  readonly #idJson: string;
  #last: unknown[] | null = null;
  #finished = false;

  constructor(
    request: Omit<EndpointRequest, 'signal' | 'cancelSignal' | 'log' | 'progress'>,
    readonly endpoint: EndpointDefinition,
    private readonly send: (message: BusMessage) => void,
    private readonly log?: RunLogger,
  ) {
    // log/progress frames are side messages: they go out while the event runs, never after its end.
    this.request = {
      ...request,
      signal: this.controller.signal,
      cancelSignal: this.cancelController.signal,
      log: (level, message, options = {}) => {
        if (!this.#finished) this.#emit(encodeFrame(logMessage(request.eventId, level, String(message), options.title, options.duration === undefined ? 10 : options.duration)), false);
      },
      progress: (units) => {
        if (!this.#finished && Array.isArray(units)) this.#emit(encodeFrame(progressMessage(request.eventId, units)), false);
      },
    };
    this.#idJson = JSON.stringify(request.eventId);
  }

  /** Whether the terminal message went out. */
  get finished(): boolean {
    return this.#finished;
  }

  /** Runs the handler to its end; never throws. */
  async run(): Promise<void> {
    this.#emit(encodeFrame(processStarts(this.request.eventId)), false);
    try {
      const result = this.endpoint.handler(this.request);
      if (isAsyncIterable(result)) {
        for await (const value of result) {
          if (this.#finished) break; // cancelled or stopped: stop pulling (runs the generator's finally)
          this.#yield(value);
        }
      } else {
        const value = await result;
        if (!this.#finished) this.#last = snapshot(this.#check(value));
      }
      this.complete();
    } catch (error) {
      if (!this.#finished) this.log?.warn({ err: error, eventId: this.request.eventId, endpoint: this.endpoint.apiName }, 'gradio handler failed');
      this.fail(error);
    }
  }

  /** Ends the event successfully with the last full values (also used for cancel, §4). */
  complete(): void {
    if (this.#finished) return;
    const data = this.#last ?? this.endpoint.outputs.map(() => null);
    this.#emit(encodeFrame(processCompleted(this.request.eventId, data)), true);
  }

  /** Ends the event with an error completion. */
  fail(error: unknown): void {
    if (this.#finished) return;
    const { title, message } = describeError(error);
    this.#emit(encodeFrame(processFailed(this.request.eventId, message, title)), true);
  }

  /** Aborts the handler's signal and ends the event at once (the JS client accepts a success completion). */
  cancel(reason: unknown = new Error('Cancelled')): void {
    this.complete();
    this.cancelController.abort(reason);
    this.controller.abort(reason);
  }

  /** Aborts both signals and ends the event with an error (shutdown). */
  stop(error: unknown): void {
    this.fail(error);
    this.cancelController.abort(error);
    this.controller.abort(error);
  }

  /** The client went away: ends the event and aborts the connection signal only (not a cancel). */
  disconnect(error: unknown): void {
    this.fail(error);
    this.controller.abort(error);
  }

  #emit(frame: string, terminal: boolean): void {
    if (terminal) this.#finished = true;
    this.send({ eventId: this.request.eventId, frame, terminal });
  }

  #check(value: unknown): unknown[] {
    const n = this.endpoint.outputs.length;
    if (!Array.isArray(value) || value.length !== n) {
      throw new Error(`The endpoint "${this.endpoint.apiName}" must produce an array of ${n} output value(s).`);
    }
    return value;
  }

  #yield(value: unknown): void {
    const values = this.#check(value);
    const previous = this.#last;
    let frame: string;
    if (previous === null) frame = encodeFrame(processGenerating(this.request.eventId, values));
    else {
      const ops = new Array(values.length);
      for (let i = 0; i < values.length; i++) ops[i] = diff(previous[i], values[i]);
      frame = encodeDiffFrame(this.#idJson, ops);
    }
    this.#last = snapshot(values);
    this.#emit(frame, false);
  }
}
