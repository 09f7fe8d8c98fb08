import { describe, expect, it } from 'vitest';
import { grantButtonText, grantScopeText, ttlText } from '../../../../../src/lib/chat/grant-words.ts';

describe('a grant in plain words (issue 37 item 6)', () => {
  it('the button says the service, the environment and the length', () => {
    expect(grantButtonText('deploy_service', { service: 'checkout-api', environment: 'staging' }, 3600)).toBe('Allow deploys of checkout-api to staging for 1 h');
    expect(grantButtonText('deploy_service', { service: 'checkout-api', environment: 'staging' }, 8 * 3600)).toBe('Allow deploys of checkout-api to staging for 8 h');
  });

  it('says "any" for what the match leaves open, and names every other argument it fixes', () => {
    expect(grantScopeText('deploy_service', { environment: 'staging' })).toBe('deploys of any service to staging');
    expect(grantScopeText('deploy_service', { service: 'a', version: '1.2', environment: 'dev', region: 'eu' })).toBe('deploys of a 1.2 to dev where region = eu');
    expect(grantScopeText('start_maintenance', { service: 'orders-api' })).toBe('maintenance on orders-api');
    expect(grantScopeText('end_maintenance', { service: 'orders-api' })).toBe('ending maintenance on orders-api');
  });

  it('another tool: its argument values, or every call of it', () => {
    expect(grantScopeText('fs_write', { path: '/tmp/a', mode: 1 })).toBe('fs_write calls with path = /tmp/a, mode = 1');
    expect(grantScopeText('fs_write', {})).toBe('every fs_write call');
  });

  it('lengths read as hours or minutes', () => {
    expect(ttlText(3600)).toBe('1 h');
    expect(ttlText(600)).toBe('10 min');
  });
});
