import { describe, expect, it } from 'vitest';
import { errorContent, refusalOf } from '../../../../../server/agent/tools/define.ts';
import { ALL_TOOLS, APPROVAL_TOOLS } from '../../../../../server/agent/tools/index.ts';

describe('refusalOf', () => {
  it.each([
    [{ approved: true }, null],
    [{ approved: false, reason: 'denied' }, { code: 'DENIED', message: 'Not done: the user denied deploy_service.' }],
    [{ approved: false, reason: 'expired' }, { code: 'APPROVAL_EXPIRED', message: 'Not done: the approval for deploy_service expired before it was confirmed.' }],
    [{ approved: false, reason: 'superseded' }, { code: 'SUPERSEDED', message: 'Not done: the request to run deploy_service was replaced by a newer message.' }],
    [undefined, { code: 'DENIED', message: 'Not done: the user denied deploy_service.' }],
    ['yes', { code: 'DENIED', message: 'Not done: the user denied deploy_service.' }],
  ])('%j', (decision, expected) => expect(refusalOf('deploy_service', decision as never)).toEqual(expected));
});

describe('the tool set', () => {
  it('has the eleven snake_case tools, each field described', () => {
    expect(ALL_TOOLS.map((t) => t.name)).toEqual([
      'show_capabilities', 'search_dashboards', 'get_dashboard', 'list_maintenance_events', 'start_maintenance', 'end_maintenance',
      'list_deployments', 'deploy_service', 'check_health', 'get_environment', 'create_task',
    ]);
    for (const t of ALL_TOOLS) {
      const shape = (t.schema as unknown as { shape: Record<string, { description?: string }> }).shape;
      for (const [field, s] of Object.entries(shape)) expect(s.description, `${t.name}.${field}`).toBeTruthy();
    }
  });
  it('marks the dangerous tools for approval', () => {
    expect([...APPROVAL_TOOLS].sort()).toEqual(['deploy_service', 'end_maintenance', 'start_maintenance']);
  });
  it('writes error contents the model can read', () => {
    expect(JSON.parse(errorContent('FORBIDDEN', 'no'))).toEqual({ error: { code: 'FORBIDDEN', message: 'no' } });
  });
});
