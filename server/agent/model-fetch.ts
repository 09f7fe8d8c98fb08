/**
 * The model client's fetch: a streamed answer that goes silent ends (issue 30 item 6).
 *
 * The OpenAI SDK's `timeout` covers a request until its headers arrive; after that a stream could
 * stay open for ever (one chunk, then only `: ping` comments kept a run `running` for 13 minutes,
 * its conversation BUSY). Here the body of an event stream is read through a watch: when no SSE
 * field line (`data:`, `event:`, ...) arrives for `idleMs` of reading, the body errors with
 * ModelStalledError and the upstream connection is dropped. Comments and blank lines are not
 * progress. The error is not an abort (the SDK would end the stream quietly as if complete), so
 * the model middleware reports it as LLM_UNAVAILABLE, retryable, and the turn ends failed.
 * @module
 */

/** The model's stream was silent for longer than MODEL_IDLE_TIMEOUT_MS. */
export class ModelStalledError extends Error {
  override readonly name = 'ModelStalledError';
  constructor(readonly idleMs: number) {
    super(`The model sent nothing for ${idleMs} ms; its stream was closed.`);
  }
}

/** Where a scan of SSE bytes stands between chunks: at a line's start, or inside a line. */
export interface SseScan {
  atLineStart: boolean;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;

/**
 * Whether `bytes` start a line that is progress (an SSE field, not a `:` comment, not blank), and
 * where the scan stands afterwards. Pure; a line split across chunks counts where it starts.
 * @example sseProgress({ atLineStart: true }, new TextEncoder().encode(': ping\n\n')) // { progress: false, ... }
 */
export function sseProgress(scan: SseScan, bytes: Uint8Array): { progress: boolean; scan: SseScan } {
  let atLineStart = scan.atLineStart;
  let progress = false;
  for (const byte of bytes) {
    if (byte === LF || byte === CR) atLineStart = true;
    else if (atLineStart) {
      atLineStart = false;
      if (byte !== COLON) progress = true;
    }
  }
  return { progress, scan: { atLineStart } };
}

/**
 * Wraps a fetch so that event-stream bodies end with ModelStalledError after `idleMs` without
 * progress. Only the time spent waiting on the model counts (a slow reader is not a stall).
 * @example new ChatOpenAI({ configuration: { fetch: idleTimeoutFetch(60_000) } })
 */
export function idleTimeoutFetch(idleMs: number, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body || !/^text\/event-stream/i.test(response.headers.get('content-type') ?? '')) return response;
    return new Response(watchIdle(response.body, idleMs), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The body, erroring with ModelStalledError once reads wait `idleMs` in all without progress. */
export function watchIdle(body: ReadableStream<Uint8Array>, idleMs: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let scan: SseScan = { atLineStart: true };
  /** Time spent waiting on the model since its last progress. */
  let silentMs = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const startedAt = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<'stalled'>((resolve) => (timer = setTimeout(() => resolve('stalled'), Math.max(0, idleMs - silentMs))));
      try {
        const next = await Promise.race([reader.read(), stalled]);
        if (next === 'stalled') {
          const error = new ModelStalledError(idleMs);
          controller.error(error);
          reader.cancel(error).catch(() => {});
          return;
        }
        if (next.done) return controller.close();
        const seen = sseProgress(scan, next.value);
        scan = seen.scan;
        silentMs = seen.progress ? 0 : silentMs + (performance.now() - startedAt);
        controller.enqueue(next.value);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
