import { describe, expect, it } from 'vitest';
import { ALL_TOOLS } from '../../../../server/agent/index.ts';
import { APPROVAL_TOOLS, approvalPrompt, TOOLS, toolPath, toolSpec } from '../../../../server/operations/index.ts';

describe('approvalPrompt', () => {
  it.each([
    ['deploy_service', { service: 'checkout-api', version: '2.4.1', environment: 'staging' }, 'Deploy checkout-api version 2.4.1 to staging?'],
    ['start_maintenance', { service: 'db-primary', duration_minutes: 30, reason: 'disk upgrade' }, 'Start maintenance on db-primary for 30 minutes (reason: disk upgrade)?'],
    ['end_maintenance', { service: 'db-primary' }, 'End the active maintenance on db-primary?'],
    ['restart_pod', { name: 'web-1', force: true }, 'Run restart_pod with name=web-1, force=true?'],
  ])('%s', (tool, args, prompt) => {
    expect(approvalPrompt(tool, args)).toBe(prompt);
  });
});

describe('the catalog is the one declaration', () => {
  it('every agent tool is a declared operation', () => {
    const declared = new Set<string>(TOOLS.map((t) => t.name));
    expect(ALL_TOOLS.map((t) => t.name).filter((n) => !declared.has(n))).toEqual([]);
  });
  it('the approval tools are those whose spec asks a question', () => {
    expect([...APPROVAL_TOOLS].sort()).toEqual(['deploy_service', 'end_maintenance', 'start_maintenance']);
  });
  it('fills path params, encoded', () => {
    expect(toolPath(toolSpec('get_dashboard'), { id: 'a/b c' })).toBe('/api/tools/dashboards/a%2Fb%20c');
    expect(toolPath(toolSpec('deploy_service'))).toBe('/api/tools/deployments');
  });
});
