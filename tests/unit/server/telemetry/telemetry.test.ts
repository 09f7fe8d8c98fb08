/**
 * The telemetry room's switch (issue 28 item 5): off unless an OTLP endpoint is set, and then a
 * no-op that records nothing; an unsupported protocol is refused by name.
 */
import { describe, expect, it } from 'vitest';
import { startSpan, startTelemetry, telemetryOn, tracesWanted } from '../../../../server/telemetry/index.ts';
import { createTracing } from '../../../../server/telemetry/sdk.ts';

describe('tracesWanted', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }, false],
  ])('%j -> %s', (env, wanted) => {
    expect(tracesWanted(env)).toBe(wanted);
  });
});

describe('off', () => {
  it('loads nothing and hands out a span that records nothing', async () => {
    expect(await startTelemetry({})).toBe(false);
    expect(telemetryOn()).toBe(false);
    const span = startSpan('invoke_agent airlock', { attributes: { a: 1 } });
    expect(span.set({ b: 2 }).fail('INTERNAL')).toBe(span);
    expect(span.traceparent()).toBeNull();
    expect(startSpan('other')).toBe(span); // one shared object: nothing allocated per span
  });
});

describe('the SDK', () => {
  it('refuses a protocol it does not ship, by name', async () => {
    await expect(createTracing({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).rejects.toThrow(/"grpc" is not supported: use http\/protobuf or http\/json/);
  });

  it('gives a span a W3C traceparent, and its child the same trace', async () => {
    const tracing = await createTracing({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' });
    const parent = tracing.start('invoke_agent airlock');
    const child = tracing.start('chat m', { parent });
    const fromRow = tracing.start('airlock.approval.wait', { parent: parent.traceparent() });
    const [, traceId, spanId, flags] = parent.traceparent()!.split('-');
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(flags).toBe('01');
    expect(child.traceparent()!.split('-')[1]).toBe(traceId);
    expect(fromRow.traceparent()!.split('-')[1]).toBe(traceId);
    expect(child.traceparent()!.split('-')[2]).not.toBe(spanId);
    await tracing.shutdown(); // nothing ended, nothing to export (no collector listens here)
  });
});
