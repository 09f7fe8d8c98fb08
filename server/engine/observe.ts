/**
 * What a run's events mean for the metrics: the engine feeds every event of a run through
 * `observe`, in order. Kept apart from the engine so the mapping is tested from a table.
 * @module
 */
import type { LiveEvent } from './events.ts';
import type { Metrics } from '../metrics/registry.ts';

/** One run being observed: when it was submitted, and whether its first token was seen. */
export interface RunObservation {
  submittedAt: number;
  firstToken: boolean;
}

/** Ledger status -> the run status the APIs report (issue 11 Decisions). */
const RUN_STATUS: Record<string, string> = { done: 'completed', paused: 'awaiting_approval', failed: 'failed', cancelled: 'cancelled' };

export function observe(metrics: Metrics, run: RunObservation, event: LiveEvent, now = performance.now()): void {
  switch (event.kind) {
    case 'partial':
      if (!run.firstToken) {
        run.firstToken = true;
        metrics.timeToFirstToken.observe((now - run.submittedAt) / 1000);
      }
      return;
    case 'tool.call':
      metrics.toolCalls.inc({ action: event.payload.policy?.action ?? 'allow' });
      return;
    case 'tool.result': {
      const p = event.payload;
      if (p.status === 'done' && p.duration_ms !== undefined) metrics.toolDuration.observe({ tool: p.tool }, p.duration_ms / 1000);
      if (p.status === 'error') metrics.errors.inc({ source: 'tool', code: p.code ?? 'TOOL_FAILURE' });
      return;
    }
    case 'approval.requested':
      metrics.approvals.inc({ result: 'requested' });
      return;
    case 'approval.resolved':
      metrics.approvals.inc({ result: event.payload.result });
      return;
    case 'run.finished': {
      const p = event.payload;
      const status = RUN_STATUS[p.status] ?? p.status;
      metrics.runs.inc({ status });
      metrics.runDuration.observe({ status }, p.duration_ms / 1000);
      if (p.error_code) metrics.errors.inc({ source: 'run', code: p.error_code });
      return;
    }
    default:
      return;
  }
}

/**
 * Counts an event iterator as an open stream from now until it ends, fails or is returned (a
 * follower that goes away), exactly once.
 */
export function countedStream<T>(inner: AsyncIterableIterator<T>, gauge: { inc(): void; dec(): void }): AsyncIterableIterator<T> {
  gauge.inc();
  let open = true;
  const close = () => {
    if (open) {
      open = false;
      gauge.dec();
    }
  };
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      try {
        const result = await inner.next();
        if (result.done) close();
        return result;
      } catch (error) {
        close();
        throw error;
      }
    },
    async return(value?: unknown) {
      close();
      return inner.return ? inner.return(value) : { done: true, value: value as T };
    },
    async throw(error?: unknown) {
      close();
      if (inner.throw) return inner.throw(error);
      throw error;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
