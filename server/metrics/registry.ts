/**
 * The process's Prometheus metrics (prom-client), one registry per process: `GET /metrics` serves
 * it. Observed at the engine (transport-free, observe.ts), so /chat, the event streams and every
 * other transport are measured alike.
 * @module
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: a token in 50 ms … a run of ten minutes. */
const LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'airlock_process_' });
  /** Running-run counters of the engines in this process (tests run several engines in one). */
  const running = new Set<() => number>();
  const metrics = {
    registry,
    timeToFirstToken: new Histogram({
      name: 'airlock_time_to_first_token_seconds', help: 'From a submitted turn to its first answer token.', buckets: LATENCY_BUCKETS, registers: [registry],
    }),
    runDuration: new Histogram({
      name: 'airlock_run_duration_seconds', help: 'Duration of runs by final status.', labelNames: ['status'] as const, buckets: LATENCY_BUCKETS, registers: [registry],
    }),
    toolDuration: new Histogram({
      name: 'airlock_tool_duration_seconds', help: 'Duration of tool calls that ran, by tool.', labelNames: ['tool'] as const, buckets: LATENCY_BUCKETS, registers: [registry],
    }),
    approvalWait: new Histogram({
      name: 'airlock_approval_wait_seconds', help: 'From an approval request to its resolution, by result.', labelNames: ['result'] as const, buckets: LATENCY_BUCKETS, registers: [registry],
    }),
    runs: new Counter({ name: 'airlock_runs_total', help: 'Finished runs by status.', labelNames: ['status'] as const, registers: [registry] }),
    approvals: new Counter({ name: 'airlock_approvals_total', help: 'Approvals by event (requested, confirmed, denied, expired).', labelNames: ['result'] as const, registers: [registry] }),
    errors: new Counter({ name: 'airlock_errors_total', help: 'Errors by source (run, tool) and code.', labelNames: ['source', 'code'] as const, registers: [registry] }),
    /** Approval webhook POSTs (issue 26): delivered, retry (failed, tried again later), failed (given up). */
    webhookDeliveries: new Counter({ name: 'airlock_webhook_deliveries_total', help: 'Approval webhook deliveries by outcome.', labelNames: ['outcome'] as const, registers: [registry] }),
    toolCalls: new Counter({ name: 'airlock_tool_calls_total', help: 'Tool calls by tool policy action.', labelNames: ['action'] as const, registers: [registry] }),
    /** kind="run": followers of a run through the engine (any transport's live stream); kind="conversation": conversation event streams (server/events). */
    openStreams: new Gauge({ name: 'airlock_open_streams', help: 'Live event streams open now, by kind (run followers, conversation event streams).', labelNames: ['kind'] as const, registers: [registry] }),
    runningRuns: new Gauge({
      name: 'airlock_running_runs', help: 'Runs executing in this process now.', registers: [registry],
      collect() {
        let n = 0;
        for (const count of running) n += count();
        this.set(n);
      },
    }),
    /** Adds an engine's running-run count to the gauge; returns the removal. */
    trackRunning(count: () => number): () => void {
      running.add(count);
      return () => running.delete(count);
    },
  };
  return metrics;
}

export type Metrics = ReturnType<typeof createMetrics>;

let shared: Metrics | undefined;

/** The process's metrics (created on first use). */
export function processMetrics(): Metrics {
  shared ??= createMetrics();
  return shared;
}
