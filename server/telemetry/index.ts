/**
 * OpenTelemetry traces of the engine's work (issue 28 item 5), behind one small interface: the
 * engine, the agent and the tools start manual spans here, and the OpenTelemetry SDK (sdk.ts) is
 * imported only when `startTelemetry` finds `OTEL_EXPORTER_OTLP_ENDPOINT` (or its traces-only
 * form) set. Until then, and for good when it is unset, every span is one shared no-op object: a
 * call costs a function call and the caller's attributes object, nothing is recorded. A leaf.
 *
 * Spans name their parent explicitly (a Span, or a W3C `traceparent` string kept on a row) rather
 * than through an ambient context: a turn is an async generator resumed by whoever reads it, and
 * LangGraph pulls its stream from the reader's side, so an ambient context would follow the reader.
 * @module
 */

import type { Span, SpanOptions, Tracing } from './types.ts';

export type { Attributes, Span, SpanOptions, Tracing } from './types.ts';

const NOOP_SPAN: Span = Object.freeze({
  set: () => NOOP_SPAN,
  fail: () => NOOP_SPAN,
  end: () => {},
  traceparent: () => null,
});

let tracing: Tracing | null = null;

/** Starts a span (the shared no-op span while telemetry is off). */
export function startSpan(name: string, options?: SpanOptions): Span {
  return tracing ? tracing.start(name, options) : NOOP_SPAN;
}

/** True once the SDK is loaded: for callers whose attributes cost something to compute. */
export function telemetryOn(): boolean {
  return tracing !== null;
}

/** Whether the environment asks for traces: an OTLP endpoint, and the SDK not disabled. Pure. */
export function tracesWanted(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Loads the SDK when the environment asks for traces (once per process; the standard `OTEL_*`
 * variables configure it, read by the SDK itself). Returns whether traces are on.
 * @example await startTelemetry(process.env) // false, and nothing loaded, without OTEL_EXPORTER_OTLP_ENDPOINT
 */
export async function startTelemetry(env: Readonly<Record<string, string | undefined>> = process.env): Promise<boolean> {
  if (tracing) return true;
  if (!tracesWanted(env)) return false;
  const { createTracing } = await import('./sdk.ts');
  tracing = await createTracing(env);
  return true;
}

/** Exports what is buffered and turns telemetry off (a no-op when it is off). */
export async function stopTelemetry(): Promise<void> {
  const stopping = tracing;
  tracing = null;
  await stopping?.shutdown();
}
