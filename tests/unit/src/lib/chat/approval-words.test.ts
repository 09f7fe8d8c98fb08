import { describe, expect, it } from 'vitest';
import { changesText, outcomeLabel, pendingActionPhrase, SUPERSEDED, supersedeWarning } from '../../../../../src/lib/chat/approval-words.ts';

describe('approval words', () => {
  it('names the pending action by its tool and what it is about', () => {
    expect(pendingActionPhrase({ tool: 'deploy_service', input: { service: 'checkout-api', version: '2.4.1', environment: 'staging' } })).toBe('deploy of checkout-api');
    expect(pendingActionPhrase({ tool: 'start_maintenance', input: { service: 'db-primary', duration_minutes: 30 } })).toBe('start maintenance of db-primary');
    expect(pendingActionPhrase({ tool: 'write_file', input: { path: '/srv/notes/a.txt' } })).toBe('write file of /srv/notes/a.txt');
    expect(pendingActionPhrase({ tool: 'reboot', input: null })).toBe('reboot');
  });

  it('says what sending will do, for one or several waiting approvals', () => {
    const deploy = { tool: 'deploy_service', input: { service: 'checkout-api' } };
    expect(supersedeWarning([deploy])).toBe('Sending this will deny the pending deploy of checkout-api.');
    expect(supersedeWarning([deploy, { tool: 'end_maintenance', input: { service: 'db-primary' } }])).toBe(
      'Sending this will deny the 2 pending actions: deploy of checkout-api, end maintenance of db-primary.',
    );
  });

  it('labels a decided card, with the new message as the reason when the server or this tab knows it', () => {
    expect(outcomeLabel({ status: 'denied', reason: SUPERSEDED })).toBe('Denied (new message)');
    expect(outcomeLabel({ status: 'denied', reason: 'state_changed' })).toBe('Not run: the state changed (asked again below)');
    expect(outcomeLabel({ status: 'denied', reason: 'user_denied' })).toBe('Denied');
    expect(outcomeLabel({ status: 'denied' })).toBe('Denied');
    expect(outcomeLabel({ status: 'confirmed' })).toBe('Confirmed');
    // Issue 37 item 3: who decided, and an edit says it ran with changes.
    expect(outcomeLabel({ status: 'confirmed', decidedBy: 'admin' })).toBe('Confirmed by admin');
    expect(outcomeLabel({ status: 'denied', reason: 'user_denied', decidedBy: 'ann' })).toBe('Denied by ann');
    expect(outcomeLabel({ status: 'confirmed', decidedBy: 'admin', edited: { from: { environment: 'staging' }, to: { environment: 'moon' } } })).toBe('Approved with changes by admin');
    expect(outcomeLabel({ status: 'expired', reason: 'approval_timeout' })).toBe('Expired');
  });
});

describe('changesText (issue 37 item 3)', () => {
  it('says each changed argument: its label (small first letter), then proposed → ran', () => {
    expect(changesText({ service: 'checkout-api', version: '2.4.1', environment: 'staging' }, { service: 'checkout-api', version: '2.4.1', environment: 'moon' })).toBe('environment staging → moon');
    expect(changesText({ duration_minutes: 30, flags: { a: 1 } }, { duration_minutes: 45, flags: { a: 2 } }, { duration_minutes: 'Duration (minutes)' })).toBe('duration (minutes) 30 → 45; flags {"a":1} → {"a":2}');
    expect(changesText({ a: 'x' }, { b: 'y' })).toBe('a x → (none); b (none) → y');
    expect(changesText({ a: 'x' }, { a: 'x' })).toBe('');
  });
});
