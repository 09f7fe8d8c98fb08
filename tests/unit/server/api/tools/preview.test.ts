import { describe, expect, it } from 'vitest';
import { ago, assertStateUnchanged, deployPreview, maintenancePreview } from '../../../../../server/api/tools/preview.ts';
import type { DeployState } from '../../../../../server/db/effect-state.ts';
import { wouldDoNothing } from '../../../../../server/agent/tools/preview.ts';

const now = new Date('2026-12-05T12:00:00Z');
const state: DeployState = {
  service: 'checkout-api', environment: 'staging', freeze: false, environmentExists: true, serviceExists: true,
  current: { id: 'd1', version: '2.4.0', deployedBy: 'admin', at: new Date('2026-12-05T10:00:00Z') },
};

describe('effect previews (issue 27 item 3)', () => {
  it('words a deploy as the issue does', () => {
    expect(deployPreview(state, '2.4.1', now).summary).toBe('checkout-api staging: 2.4.0 → 2.4.1; last deploy 2 h ago by admin');
  });

  it('the state hash ignores the clock and the new version, and changes with the running deployment or a freeze', () => {
    const a = deployPreview(state, '2.4.1', now).state_hash;
    expect(deployPreview(state, '9.9.9', new Date(now.getTime() + 3_600_000)).state_hash).toBe(a);
    expect(deployPreview({ ...state, current: { ...state.current!, id: 'd2' } }, '2.4.1', now).state_hash).not.toBe(a);
    expect(deployPreview({ ...state, freeze: true }, '2.4.1', now).state_hash).not.toBe(a);
  });

  it('words a maintenance window with its dependents', () => {
    const p = maintenancePreview({ service: 'db-primary', serviceExists: true, active: null, dependents: ['a', 'b'] }, 30, now);
    expect(p.summary).toBe('db-primary: no maintenance window now; 2 dependent services; 30 min from now');
  });

  it('a call that would do nothing says so in details.no_effect, so no grant is offered (issue 37 item 6)', () => {
    expect(deployPreview({ ...state, serviceExists: false }, '1.0.0', now).details).toMatchObject({ no_effect: true });
    expect(deployPreview({ ...state, environmentExists: false }, '1.0.0', now).details).toMatchObject({ no_effect: true });
    expect(deployPreview(state, '2.4.1', now).details).not.toHaveProperty('no_effect');
    expect(maintenancePreview({ service: 'nope', serviceExists: false, active: null, dependents: [] }, 30, now).details).toMatchObject({ no_effect: true });
    expect(wouldDoNothing(deployPreview({ ...state, serviceExists: false }, '1.0.0', now))).toBe(true);
    expect(wouldDoNothing(deployPreview(state, '2.4.1', now))).toBe(false);
    expect(wouldDoNothing(null)).toBe(false);
  });

  it('ago is coarse', () => {
    expect(ago(new Date(now.getTime() - 30_000), now)).toBe('just now');
    expect(ago(new Date(now.getTime() - 5 * 60_000), now)).toBe('5 min ago');
    expect(ago(new Date(now.getTime() - 3 * 86_400_000), now)).toBe('3 d ago');
  });

  it('If-Match: absent passes, equal passes (quoted too), different is PRECONDITION_FAILED', () => {
    expect(() => assertStateUnchanged(undefined, 'h')).not.toThrow();
    expect(() => assertStateUnchanged('"h"', 'h')).not.toThrow();
    expect(() => assertStateUnchanged('g', 'h')).toThrow(expect.objectContaining({ code: 'PRECONDITION_FAILED', status: 412 }));
  });
});
