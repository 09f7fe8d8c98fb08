import { describe, expect, it } from 'vitest';
import { renderHelp, renderQuestion, renderToolResults, type ToolResult } from '../../../../../server/agent/offline-model/answer.ts';
import { renderData } from '../../../../../server/agent/offline-model/render-data.ts';

const err = (code: string, message = 'x') => JSON.stringify({ error: { code, message } });

describe('renderToolResults', () => {
  const table: Array<[string, ToolResult, string]> = [
    ['deploy done', { name: 'deploy_service', args: { service: 'checkout-api', version: '2.4.1', environment: 'staging' }, content: '{"status":"in_progress"}' },
      'Done: checkout-api 2.4.1 is deploying to staging (status: in_progress).'],
    ['maintenance started', { name: 'start_maintenance', args: { service: 'db-primary', duration_minutes: 30, reason: 'disk upgrade' }, content: '{"id":"m1"}' },
      'Done: maintenance started on db-primary for 30 minutes (disk upgrade).'],
    ['maintenance ended', { name: 'end_maintenance', args: { service: 'db-primary' }, content: '{}' }, 'Done: the maintenance on db-primary has ended.'],
    ['task created', { name: 'create_task', args: { title: 'Rotate keys' }, content: '{"id":"t-9"}' }, 'Created the task “Rotate keys” (id t-9).'],
    ['denied', { name: 'deploy_service', args: { service: 'checkout-api', version: '2.4.1', environment: 'staging' }, content: err('DENIED') },
      'I did not deploy checkout-api 2.4.1 to staging: you denied the request, so nothing was changed.'],
    ['expired', { name: 'end_maintenance', args: { service: 'db-primary' }, content: err('APPROVAL_EXPIRED') },
      'I did not end the maintenance on db-primary: the approval expired before it was confirmed, so nothing was changed.'],
    ['superseded', { name: 'start_maintenance', args: { service: 'db-primary' }, content: err('SUPERSEDED') },
      'I did not start maintenance on db-primary: the request was replaced by a newer message, so nothing was changed.'],
    ['forbidden', { name: 'deploy_service', args: { service: 'a-b', version: '1.0', environment: 'prod' }, content: err('FORBIDDEN', 'Needs deployments:write.') },
      "I could not deploy a-b 1.0 to prod: you don't have permission to do that. Needs deployments:write."],
    ['tool failure', { name: 'check_health', args: { service: 'payments-api' }, content: err('TOOL_FAILURE', 'backend down') },
      'I could not check the health of payments-api: backend down'],
    ['langchain error text', { name: 'check_health', args: {}, content: 'Error: boom\n Please fix your mistakes.' },
      'I could not check service health: boom\n Please fix your mistakes.'],
    ['health object', { name: 'check_health', args: { service: 'payments-api' }, content: '{"service":"payments-api","status":"healthy"}' },
      'payments-api is healthy.'],
    ['health with metrics', { name: 'check_health', args: { service: 'search-api' }, content: JSON.stringify({ service: 'search-api', status: 'degraded', latency_p95_ms: 870, error_rate_pct: 2.4, uptime_30d_pct: 99.71, in_maintenance: false }) },
      'search-api is degraded (p95 latency 870 ms, error rate 2.4 %, 30-day uptime 99.71 %).'],
    ['health of all, with the summary', { name: 'check_health', args: {}, content: JSON.stringify({ summary: { total: 2, healthy: 1, degraded: 1 }, items: [{ service: 'a-b', status: 'healthy' }, { service: 'c-d', status: 'degraded' }] }) },
      'Service health:\n\ntotal: 2, healthy: 1, degraded: 1.\n\n| service | status |\n| --- | --- |\n| c-d | degraded |\n| a-b | healthy |'],
    ['one environment', { name: 'get_environment', args: { environment: 'staging' }, content: JSON.stringify({ name: 'staging', description: 'Pre-production', region: 'eu-west-1', cluster: 'stg-1', services: [{ service: 'a-b', version: '1.2.0' }] }) },
      '**staging**: Pre-production (region eu-west-1, cluster stg-1).\n\n| service | version |\n| --- | --- |\n| a-b | 1.2.0 |'],
    ['dashboards table', { name: 'search_dashboards', args: { query: 'latency' }, content: '{"items":[{"id":"d1","title":"API latency"}]}' },
      'Dashboards matching “latency”:\n\n| id | title |\n| --- | --- |\n| d1 | API latency |'],
    ['empty list', { name: 'search_dashboards', args: { query: 'zzz' }, content: '{"items":[]}' }, 'Dashboards matching “zzz”:\n\nNothing found.'],
    ['capabilities', { name: 'show_capabilities', args: {}, content: JSON.stringify({ user: { username: 'ann', role: 'viewer' }, tools: [{ name: 'check_health', allowed: true, description: 'Health' }, { name: 'deploy_service', allowed: false, description: 'Deploy' }] }) },
      'Here is what I can do for you (you are ann, role viewer):\n\n| tool | allowed | description |\n| --- | --- | --- |\n| check_health | yes | Health |\n| deploy_service | no | Deploy |'],
  ];
  it.each(table)('%s', (_label, result, expected) => {
    expect(renderToolResults([result])).toBe(expected);
  });

  it('joins several results with a blank line', () => {
    const r: ToolResult = { name: 'end_maintenance', args: { service: 'a-b' }, content: '{}' };
    expect(renderToolResults([r, r])).toBe('Done: the maintenance on a-b has ended.\n\nDone: the maintenance on a-b has ended.');
  });
});

describe('renderData', () => {
  it('caps a table at 25 rows and says how many more', () => {
    const rows = Array.from({ length: 27 }, (_, i) => ({ n: i }));
    const out = renderData({ items: rows });
    expect(out.split('\n').filter((l) => l.startsWith('| ') && !l.includes('---'))).toHaveLength(26);
    expect(out).toContain('…and 2 more.');
  });
  it('puts down and degraded rows first, in the given order otherwise, even past the cap', () => {
    const rows = Array.from({ length: 30 }, (_, i) => ({ service: `s${i}`, status: i === 29 ? 'degraded' : i === 28 ? 'down' : 'up' }));
    const body = renderData(rows).split('\n').slice(2, 6);
    expect(body).toEqual(['| s28 | down |', '| s29 | degraded |', '| s0 | up |', '| s1 | up |']);
  });
  it('shortens UUIDs to their first 8 characters and keeps ISO times', () => {
    const out = renderData([{ id: '3f2a9c41-5b6d-4e7f-8a9b-0c1d2e3f4a5b', at: '2026-12-05T04:00:00.000Z' }]);
    expect(out).toContain('| 3f2a9c41 | 2026-12-05T04:00:00.000Z |');
  });
  it('shows an object with many fields as a field table', () => {
    expect(renderData({ a: 1, b: 2, c: 3, d: 'x|y' })).toBe('| field | value |\n| --- | --- |\n| a | 1 |\n| b | 2 |\n| c | 3 |\n| d | x\\|y |');
  });
});

describe('questions and help', () => {
  it('asks for the missing arguments in one short question', () => {
    expect(renderQuestion('deploy_service', { service: 'checkout-api' }, ['version', 'environment'])).toBe(
      'To deploy checkout-api, I still need which version and which environment (for example staging or production). Could you tell me?',
    );
  });
  it('greets and lists what it can do', () => {
    expect(renderHelp('hi!')).toMatch(/^Hello! I'm the Airlock operations assistant\. I can search/);
    expect(renderHelp('tell me a joke')).not.toMatch(/^Hello/);
  });
});
