import { describe, expect, it } from 'vitest';
import { TITLE_MAX_CHARS, titleFor } from '../../../../server/engine/title-rule.ts';

describe('titleFor (the offline model title rule)', () => {
  const table: Array<[first: string, answer: string, title: string]> = [
    ['check health of all services', 'All services are healthy.', 'Health of all services'],
    ['can you check the health of all services?', '', 'Health of all services'],
    ['Please check health of all services', '', 'Health of all services'],
    ['deploy checkout-api 2.4.1 to staging', 'I need your approval.', 'Deploy checkout-api 2.4.1 to staging'],
    ['Hi! Could you please restart payments-api in production?', '', 'Restart payments-api in production'],
    ['show me the payments latency dashboards', '', 'Payments latency dashboards'],
    ["what's the replication lag on db-primary?", '', 'Replication lag on db-primary'],
    ['list open incidents', '', 'Open incidents'],
    ['I want to create a task to rotate the auth signing keys before friday', '', 'Create a task to rotate the auth…'],
    ['  rollback   checkout-api\n\nit is failing since 10:00', '', 'Rollback checkout-api'],
    ['Why is checkout slow? It was fine yesterday.', '', 'Why is checkout slow?'],
    ['What can you do?', 'I can check health…', 'What can you do?'],
    ['', 'This PDF is a runbook for failover.', 'This PDF is a runbook for failover'],
    ['   ', '  ', 'New conversation'],
    ['check', '', 'Check'],
    ['a\u202Eevil title', '', 'Aevil title'],
  ];
  it.each(table)('%j -> %j', (first, answer, title) => {
    expect(titleFor(first, answer)).toBe(title);
  });

  it('cuts one very long word to the character cap', () => {
    const title = titleFor('x'.repeat(200), '');
    expect(title.length).toBeLessThanOrEqual(TITLE_MAX_CHARS);
    expect(title.endsWith('…')).toBe(true);
  });

  it('gives different titles to first messages that share their first 20 characters', () => {
    expect(titleFor('check health of all services in staging', '')).not.toBe(titleFor('check health of all services in production', ''));
  });
});
