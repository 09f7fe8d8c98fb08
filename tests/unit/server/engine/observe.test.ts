import { describe, expect, it } from 'vitest';
import type { LiveEvent } from '../../../../server/engine/events.ts';
import { countedStream, observe } from '../../../../server/engine/observe.ts';
import { createMetrics } from '../../../../server/metrics/index.ts';

const RUN = '6f1c2a6e-0000-4000-8000-000000000001';
const APPROVAL = '6f1c2a6e-0000-4000-8000-000000000002';
const committed = (kind: string, payload: Record<string, unknown>): LiveEvent =>
  ({ kind, payload: { run_id: RUN, ...payload }, seq: 1, conversation_id: RUN, run_id: RUN, created_at: '' }) as unknown as LiveEvent;

/** A counter's or gauge's value, summed over the series matching `labels`. */
async function value(metrics: ReturnType<typeof createMetrics>, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (metric?.values ?? []) as Array<{ value: number; labels: Record<string, string | number> }>;
  return values.filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l)).reduce((n, v) => n + v.value, 0);
}

/** The `_count` of a histogram (prom-client reports it as a value named <name>_count). */
async function count(metrics: ReturnType<typeof createMetrics>, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (metric?.values ?? []) as Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>;
  return values.filter((v) => v.metricName === `${name}_count` && Object.entries(labels).every(([k, l]) => v.labels[k] === l)).reduce((n, v) => n + v.value, 0);
}

describe('observe: run events -> metrics, row by row', () => {
  it('the first partial observes the time to first token once', async () => {
    const m = createMetrics();
    const run = { submittedAt: 1000, firstToken: false };
    observe(m, run, { kind: 'partial', payload: { run_id: RUN, token: 'a' } }, 1250);
    observe(m, run, { kind: 'partial', payload: { run_id: RUN, token: 'b' } }, 1300);
    expect(await count(m, 'airlock_time_to_first_token_seconds')).toBe(1);
    const sum = (await m.registry.getMetricsAsJSON()).find((x) => x.name === 'airlock_time_to_first_token_seconds')!.values.find((v) => (v as { metricName?: string }).metricName?.endsWith('_sum'))!;
    expect(sum.value).toBeCloseTo(0.25);
  });

  const rows: Array<[string, LiveEvent, string, Record<string, string>, 'count' | 'value']> = [
    ['a finished run by its v1 status', committed('run.finished', { status: 'done', turns: 1, duration_ms: 1500, stop_reason: 'end_turn', error_code: null }), 'airlock_runs_total', { status: 'completed' }, 'value'],
    ['a paused run is awaiting_approval', committed('run.finished', { status: 'paused', turns: 1, duration_ms: 10, stop_reason: 'approval_required', error_code: null }), 'airlock_run_duration_seconds', { status: 'awaiting_approval' }, 'count'],
    ['a failed run counts its code', committed('run.finished', { status: 'failed', turns: 0, duration_ms: 10, stop_reason: 'error', error_code: 'LLM_UNAVAILABLE' }), 'airlock_errors_total', { source: 'run', code: 'LLM_UNAVAILABLE' }, 'value'],
    ['a tool that ran, by tool', committed('tool.result', { tool_call_id: 'c', tool: 'check_health', status: 'done', duration_ms: 40 }), 'airlock_tool_duration_seconds', { tool: 'check_health' }, 'count'],
    ['a tool error by code', committed('tool.result', { tool_call_id: 'c', tool: 'deploy_service', status: 'error', error: 'no', code: 'FORBIDDEN' }), 'airlock_errors_total', { source: 'tool', code: 'FORBIDDEN' }, 'value'],
    ['a call by its policy action', committed('tool.call', { tool_call_id: 'c', tool: 'check_health', input: {}, policy: { scope: 'tool:check_health', action: 'caution', matched: true } }), 'airlock_tool_calls_total', { action: 'caution' }, 'value'],
    ['an approval requested', committed('approval.requested', { approval_id: APPROVAL, tool: 't', input: {}, prompt: 'p', expires_at: '2026-01-01T00:00:00Z', timeout_s: 300 }), 'airlock_approvals_total', { result: 'requested' }, 'value'],
    ['an approval resolved', committed('approval.resolved', { approval_id: APPROVAL, result: 'expired' }), 'airlock_approvals_total', { result: 'expired' }, 'value'],
  ];
  it.each(rows)('%s', async (_name, event, metric, labels, how) => {
    const m = createMetrics();
    observe(m, { submittedAt: 0, firstToken: false }, event, 10);
    expect(how === 'count' ? await count(m, metric, labels) : await value(m, metric, labels)).toBe(1);
  });

  it('user messages and answers change nothing', async () => {
    const m = createMetrics();
    observe(m, { submittedAt: 0, firstToken: false }, committed('assistant.message', { text: 'hi' }), 10);
    expect(await value(m, 'airlock_runs_total')).toBe(0);
    expect(await count(m, 'airlock_time_to_first_token_seconds')).toBe(0);
  });

  it('running runs are summed over the engines registered, until removed', async () => {
    const m = createMetrics();
    const untrack = m.trackRunning(() => 2);
    m.trackRunning(() => 1);
    expect(await value(m, 'airlock_running_runs')).toBe(3);
    untrack();
    expect(await value(m, 'airlock_running_runs')).toBe(1);
  });
});

describe('countedStream: one open stream from creation to its end, exactly once', () => {
  async function* three() {
    yield 1;
    yield 2;
    yield 3;
  }
  async function* failing() {
    yield 1;
    throw new Error('boom');
  }
  const gauge = () => {
    const g = { n: 0, inc: () => void g.n++, dec: () => void g.n-- };
    return g;
  };

  it('read to the end', async () => {
    const g = gauge();
    const s = countedStream(three(), g);
    expect(g.n).toBe(1);
    const seen = [];
    for await (const v of s) seen.push(v);
    expect(seen).toEqual([1, 2, 3]);
    expect(g.n).toBe(0);
  });
  it('a follower that leaves early (return), even twice', async () => {
    const g = gauge();
    const s = countedStream(three(), g);
    for await (const v of s) if (v === 1) break;
    await s.return!();
    expect(g.n).toBe(0);
  });
  it('a stream that fails', async () => {
    const g = gauge();
    await expect((async () => { for await (const _ of countedStream(failing(), g)) void _; })()).rejects.toThrow('boom');
    expect(g.n).toBe(0);
  });
});
