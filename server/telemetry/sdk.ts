/**
 * The OpenTelemetry SDK behind index.ts's interface, imported only when traces are wanted: a
 * BasicTracerProvider (sampler and limits from `OTEL_TRACES_SAMPLER`, `OTEL_SPAN_*`), a
 * BatchSpanProcessor (`OTEL_BSP_*`) and the OTLP/HTTP exporter of `OTEL_EXPORTER_OTLP_PROTOCOL`
 * (`http/protobuf`, the default, or `http/json`; endpoint, headers, timeout and compression from
 * `OTEL_EXPORTER_OTLP_*`, read by the exporter). The resource is `service.name=airlock` under
 * `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES`. Nothing is registered globally: spans come only
 * from this tracer, with explicit parents.
 * @module
 */
import { defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Link, type Span as OtelSpan } from '@opentelemetry/api';
import { parseTraceParent, W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Attributes, Span, SpanOptions, Tracing } from './types.ts';

const propagator = new W3CTraceContextPropagator();

/** The OTLP/HTTP exporter the protocol names; gRPC is not shipped. */
async function exporterFor(env: Readonly<Record<string, string | undefined>>): Promise<SpanExporter> {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim();
  if (protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  if (protocol === 'http/protobuf') return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
  throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL "${protocol}" is not supported: use http/protobuf or http/json`);
}

/** Attributes without the undefined ones. */
function defined(attributes: Attributes | undefined): Record<string, string | number | boolean | string[]> {
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const [k, v] of Object.entries(attributes ?? {})) if (v !== undefined) out[k] = v;
  return out;
}

class SdkSpan implements Span {
  constructor(readonly otel: OtelSpan) {}
  set(attributes: Attributes): Span {
    this.otel.setAttributes(defined(attributes));
    return this;
  }
  fail(errorType: string, message?: string): Span {
    this.otel.setAttribute('error.type', errorType);
    this.otel.setStatus({ code: SpanStatusCode.ERROR, message: message ?? errorType });
    return this;
  }
  end(at?: Date): void {
    this.otel.end(at);
  }
  traceparent(): string | null {
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, this.otel), carrier, defaultTextMapSetter);
    return carrier.traceparent ?? null;
  }
}

/** The context a parent (a span of ours, or a stored traceparent) names; the root when none or unreadable. */
function contextOf(parent: Span | string | null | undefined): Context {
  if (parent instanceof SdkSpan) return trace.setSpan(ROOT_CONTEXT, parent.otel);
  const spanContext = typeof parent === 'string' ? parseTraceParent(parent) : null;
  return spanContext ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : ROOT_CONTEXT;
}

function linkOf(target: Span | string | null | undefined): Link[] {
  const spanContext = trace.getSpanContext(contextOf(target));
  return spanContext ? [{ context: spanContext }] : [];
}

export async function createTracing(env: Readonly<Record<string, string | undefined>>): Promise<Tracing> {
  const resource = defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'airlock' })).merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(await exporterFor(env))] });
  const tracer = provider.getTracer('airlock');
  return {
    start(name: string, options: SpanOptions = {}): Span {
      const otel = tracer.startSpan(
        name,
        {
          kind: options.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
          startTime: options.start,
          attributes: defined(options.attributes),
          links: options.links?.flatMap(linkOf),
        },
        contextOf(options.parent),
      );
      return new SdkSpan(otel);
    },
    shutdown: () => provider.shutdown(),
  };
}
