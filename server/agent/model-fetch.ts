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
 *
 * It also gives a role to a first delta that has none (issue 30, finding 13): @langchain/openai
 * takes a delta's role from the delta, else from the previous one, and a first delta with no role
 * became a ChatMessageChunk, which failed every turn. The first `data:` event with a delta gets
 * `role: "assistant"` when it has none; every other byte passes unchanged.
 *
 * And it meters each call for the request that made it (meteredFetch, issue 28 Server-Timing).
 * @module
 */
import { startTiming } from '../timing/index.ts';

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
 * progress (only the time spent waiting on the model counts: a slow reader is not a stall), and
 * so that their first delta has a role.
 * @example new ChatOpenAI({ configuration: { fetch: idleTimeoutFetch(60_000) } })
 */
export function idleTimeoutFetch(idleMs: number, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body || !/^text\/event-stream/i.test(response.headers.get('content-type') ?? '')) return response;
    return new Response(withFirstRole(watchIdle(response.body, idleMs)), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/**
 * One SSE `data:` line (without its line end) with `role: "assistant"` added to each delta that
 * lacks one, and whether it carried a delta at all. Lines that are not JSON chunks are unchanged.
 * @example firstRoleLine('data: {"choices":[{"delta":{"content":"Hi"}}]}').line // 'data: {"choices":[{"delta":{"content":"Hi","role":"assistant"}}]}'
 */
export function firstRoleLine(line: string): { line: string; delta: boolean } {
  const match = /^data: ?(.*)$/s.exec(line);
  if (!match) return { line, delta: false };
  let data: unknown;
  try {
    data = JSON.parse(match[1]!);
  } catch {
    return { line, delta: false };
  }
  const choices = typeof data === 'object' && data !== null ? (data as { choices?: unknown }).choices : undefined;
  if (!Array.isArray(choices)) return { line, delta: false };
  let delta = false;
  let changed = false;
  for (const choice of choices) {
    const d = typeof choice === 'object' && choice !== null ? (choice as { delta?: unknown }).delta : undefined;
    if (typeof d !== 'object' || d === null) continue;
    delta = true;
    const record = d as Record<string, unknown>;
    if (record.role === undefined || record.role === null || record.role === '') {
      record.role = 'assistant';
      changed = true;
    }
  }
  return { line: changed ? `data: ${JSON.stringify(data)}` : line, delta };
}

/**
 * The body, with the first delta given `role: "assistant"` if it has none. Until a delta has been
 * seen, bytes are held up to each line end (so a line split across chunks is read whole); after
 * that they pass as they come.
 */
export function withFirstRole(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = new Uint8Array(0);
  let seen = false;
  /** `line` (complete, so whole UTF-8) as bytes, its delta given a role. */
  const fix = (line: Uint8Array): Uint8Array => {
    const text = decoder.decode(line);
    const fixed = firstRoleLine(text);
    seen = fixed.delta;
    return fixed.line === text ? line : encoder.encode(fixed.line);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = await reader.read();
        if (next.done) {
          if (pending.length) controller.enqueue(seen ? pending : fix(pending));
          pending = new Uint8Array(0);
          return controller.close();
        }
        if (seen) return controller.enqueue(next.value);
        const joined = new Uint8Array(pending.length + next.value.length);
        joined.set(pending);
        joined.set(next.value, pending.length);
        const parts: Uint8Array[] = [];
        let from = 0;
        for (let i = 0; i < joined.length && !seen; i++) {
          if (joined[i] !== LF && joined[i] !== CR) continue;
          parts.push(fix(joined.subarray(from, i)), joined.subarray(i, i + 1));
          from = i + 1;
        }
        pending = joined.slice(from);
        if (seen && pending.length) {
          parts.push(pending);
          pending = new Uint8Array(0);
        }
        if (parts.length) {
          const size = parts.reduce((n, p) => n + p.length, 0);
          const out = new Uint8Array(size);
          let at = 0;
          for (const p of parts) (out.set(p, at), (at += p.length));
          return controller.enqueue(out);
        }
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
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

/**
 * Wraps a fetch so that each model call's time, request to last byte, adds to the current
 * request's `model` time (server/timing; outside a request it is the fetch itself).
 */
export function meteredFetch(base: typeof fetch): typeof fetch {
  return async (input, init) => {
    const stop = startTiming('model');
    if (!stop) return base(input, init);
    let response: Response;
    try {
      response = await base(input, init);
    } catch (error) {
      stop();
      throw error;
    }
    if (!response.body) {
      stop();
      return response;
    }
    return new Response(untilEnd(response.body, stop), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The body, calling `done` once when it ends, fails or its reader cancels it (the SDK stops at [DONE]). */
function untilEnd(body: ReadableStream<Uint8Array>, done: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let ended = false;
  const end = () => {
    if (!ended) (ended = true), done();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: last, value } = await reader.read();
        if (last) {
          end();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}
