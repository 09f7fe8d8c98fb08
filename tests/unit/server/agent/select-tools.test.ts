import { describe, expect, it } from 'vitest';
import { localEmbedder } from '../../../../server/agent/embedder.ts';
import { DEFAULT_TOOLS, getToolsForQuery, selectionQuery, type Embedder, type Turn } from '../../../../server/agent/select-tools.ts';
import { ALL_TOOLS } from '../../../../server/agent/tools/index.ts';

const catalog = ALL_TOOLS.map((t) => ({ name: t.name, description: t.description }));
const MAINTENANCE = ['show_capabilities', 'list_maintenance_events', 'start_maintenance', 'end_maintenance'];

/** A fake embedder: the query (first text) and every description mentioning "environment" point the same way. */
const towardsEnvironment: Embedder = async (texts) => texts.map((t, i) => (i === 0 || /^get environment:/.test(t) ? [1, 0] : [0, 1]));

describe('getToolsForQuery — the seed table, row by row', () => {
  const rows: Array<[row: string, query: string, prefetch: boolean, expected: string[]]> = [
    ['Capabilities/help', 'what can you do?', false, ['show_capabilities']],
    ['Capabilities/help + matched intents', 'help me with maintenance', false, MAINTENANCE],
    ['Dashboard query with prefetch (search suppressed)', 'open the checkout dashboards', true, ['show_capabilities', 'get_dashboard']],
    ['Dashboard query without prefetch', 'open the checkout dashboards', false, ['show_capabilities', 'search_dashboards', 'get_dashboard']],
    ['Maintenance', 'start maintenance on db-primary for 30 minutes', false, MAINTENANCE],
    ['Maintenance (list)', 'list maintenance events', false, MAINTENANCE],
    ['Unknown/general', 'tell me a joke', false, ['show_capabilities', ...DEFAULT_TOOLS]],
    ['Deployments', 'deploy checkout-api 2.4.1 to staging', false, ['show_capabilities', 'list_deployments', 'deploy_service', 'get_environment']],
    ['Deployments (roll back)', 'roll back payments-api', false, ['show_capabilities', 'list_deployments', 'deploy_service']],
    ['Health (fewer than 3, no embedder)', "what's the health of payments-api", false, ['show_capabilities', 'check_health']],
  ];
  it.each(rows)('%s: %s', async (_row, query, prefetch, expected) => {
    expect(await getToolsForQuery(query, prefetch, undefined, catalog)).toEqual(expected);
  });
});

describe('embedding fallback', () => {
  it('tops up to 3 tools with the most similar descriptions', async () => {
    expect(await getToolsForQuery("what's the health of payments-api", false, towardsEnvironment, catalog)).toEqual([
      'show_capabilities', 'check_health', 'get_environment',
    ]);
  });

  it('is not used when keywords give 3 or more', async () => {
    let called = false;
    const spy: Embedder = async (t) => ((called = true), towardsEnvironment(t));
    await getToolsForQuery('list maintenance events', false, spy, catalog);
    expect(called).toBe(false);
  });

  it('never adds search_dashboards when dashboards are prefetched', async () => {
    const towardsSearch: Embedder = async (texts) => texts.map((t, i) => (i === 0 || /search/i.test(t) ? [1, 0] : [0, 1]));
    expect(await getToolsForQuery('open the checkout dashboards', true, towardsSearch, catalog)).not.toContain('search_dashboards');
  });

  it('keeps the keyword choice when embeddings fail', async () => {
    const broken: Embedder = async () => {
      throw new Error('no embeddings here');
    };
    expect(await getToolsForQuery('health of payments-api', false, broken, catalog)).toEqual(['show_capabilities', 'check_health']);
  });

  it('works with the local hashed embeddings', async () => {
    expect(await getToolsForQuery('health of payments-api services', false, localEmbedder, catalog)).toEqual([
      'show_capabilities', 'list_deployments', 'check_health',
    ]);
    // Nothing similar enough: the keyword choice stands.
    expect(await getToolsForQuery('is payments-api healthy', false, localEmbedder, catalog)).toEqual(['show_capabilities', 'check_health']);
  });
});

describe('selectionQuery', () => {
  const rows: Array<[string, Turn[], string]> = [
    ['the last user message', [{ role: 'user', text: 'a' }, { role: 'assistant', text: 'b.' }, { role: 'user', text: 'c' }], 'c'],
    ['joined after a question', [{ role: 'user', text: 'deploy checkout-api' }, { role: 'assistant', text: 'Which version?' }, { role: 'user', text: '2.4.1 to staging' }], 'deploy checkout-api 2.4.1 to staging'],
    ['not joined after tool calls', [{ role: 'user', text: 'a' }, { role: 'assistant', text: 'x?', hasToolCalls: true }, { role: 'user', text: 'c' }], 'c'],
    ['empty without users', [{ role: 'system', text: 's' }], ''],
  ];
  it.each(rows)('%s', (_label, turns, expected) => expect(selectionQuery(turns)).toBe(expected));
});
