/**
 * The telemetry interface's types, apart from index.ts so that the SDK side (sdk.ts, loaded on
 * demand by index.ts) can implement them without importing index.ts back (no file-level circle).
 * @module
 */

/** Attribute values as the OpenTelemetry API takes them; undefined ones are left out. */
export type Attributes = Record<string, string | number | boolean | string[] | undefined>;

export interface Span {
  /** Adds attributes (undefined values are skipped). */
  set(attributes: Attributes): Span;
  /** Marks the span failed: `error.type` (a taxonomy code or an error's name) and the status message. */
  fail(errorType: string, message?: string): Span;
  /** Ends it, now or at `at`. */
  end(at?: Date): void;
  /** Its W3C `traceparent` (to store on a row, or send on an HTTP call); null when telemetry is off. */
  traceparent(): string | null;
}

export interface SpanOptions {
  /** The parent: a span, or a stored `traceparent`; none: a new trace. */
  parent?: Span | string | null;
  /** `client` for a call that leaves the process (a model call, a backend API call). */
  kind?: 'internal' | 'client';
  /** Backdated start (an approval wait starts when the approval was requested). */
  start?: Date;
  attributes?: Attributes;
  /** Spans this one is caused by without being their child (the turn that decided an approval). */
  links?: Array<Span | string | null | undefined>;
}

/** What the SDK side (sdk.ts) provides once loaded. */
export interface Tracing {
  start(name: string, options?: SpanOptions): Span;
  /** Exports what is buffered and stops (process shutdown). */
  shutdown(): Promise<void>;
}
