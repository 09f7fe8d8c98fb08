import { describe, expect, it } from 'vitest';
import { approvedAlready, ownRequest, requestExcerpt, waitingText, whoElse } from '../../../../../src/lib/approvals/second-approver.ts';

const admin = { username: 'admin', role: 'admin' };
const operator = { username: 'operator', role: 'operator' };
const rule = { roles: ['admin', 'operator'], users: [] };

describe('the second approver (issue 37 item 4)', () => {
  it('after the first of two approvals, the one who approved reads whom it waits for', () => {
    const p = { approvalsRequired: 2, approvedBy: ['admin'], approvers: rule };
    expect(waitingText(p, admin)).toBe('You approved. Waiting for one more from: operator, or another admin');
    expect(approvedAlready(p, admin)).toBe(true);
    // Anyone else still decides: no such words for them, and their buttons stay.
    expect(waitingText(p, operator)).toBe('');
    expect(approvedAlready(p, operator)).toBe(false);
  });

  it('counts what is missing, names rule users not yet approved, and says nothing once complete or before any approval', () => {
    expect(waitingText({ approvalsRequired: 3, approvedBy: ['admin'], approvers: { roles: ['admin'], users: ['ann', 'bob'] } }, admin)).toBe('You approved. Waiting for 2 more from: ann, bob, or another admin');
    expect(whoElse({ roles: [], users: ['ann', 'bob'] }, ['ann'], { username: 'ann', role: 'operator' })).toBe('bob');
    expect(whoElse(null, [], admin)).toBe('another approver');
    expect(waitingText({ approvalsRequired: 2, approvedBy: ['admin', 'operator'], approvers: rule }, admin)).toBe('');
    expect(waitingText({ approvalsRequired: 2, approvedBy: [], approvers: rule }, admin)).toBe('');
    expect(waitingText({ approvalsRequired: 2, approvedBy: ['admin'], approvers: rule }, null)).toBe('');
  });

  it('"Open the conversation" is the requester\'s own only', () => {
    expect(ownRequest('default:operator', operator)).toBe(true);
    expect(ownRequest('default:operator', admin)).toBe(false);
    expect(ownRequest('default:operator', null)).toBe(false);
  });

  it('the requester\'s message is at most 500 characters (by code point)', () => {
    expect(requestExcerpt('Deploy checkout-api 2.4.1 to production')).toBe('Deploy checkout-api 2.4.1 to production');
    expect(requestExcerpt(null)).toBe('');
    const long = requestExcerpt('😀'.repeat(600));
    expect([...long]).toHaveLength(500);
    expect(long.endsWith('…')).toBe(true);
  });
});
