import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../../../server/engine/index.ts';
import { awaitsApprovedTool, countTurns, endsInProgress } from '../../../../server/engine/recovery.ts';
import { checkTurnInput, replayDecision, requestHash } from '../../../../server/engine/submit-acceptance.ts';
import type { TurnInput } from '../../../../server/engine/types.ts';

const ev = (kind: string, payload: Record<string, unknown> = {}) => ({ kind, payload }) as unknown as LedgerEvent;
const input = (over: Partial<TurnInput> = {}): TurnInput => ({ text: 'hi', files: [], conversationId: null, action: null, requestId: null, approvalId: null, ...over });
const storage = { resolve: async (p: string, user: string) => (p.startsWith(`/${user}/`) ? p : null) };

describe('submit acceptance', () => {
  it("refuses empty messages and files that are not the user's", async () => {
    await expect(checkTurnInput(input({ text: '' }), storage, 'ann')).rejects.toThrow(/empty/);
    await expect(checkTurnInput(input({ files: [{ path: '/etc/passwd' }] }), storage, 'ann')).rejects.toThrow(/not uploaded here/);
    await expect(checkTurnInput(input({ files: [{ path: '/bob/a.txt' }] }), storage, 'ann')).rejects.toThrow(/not uploaded here/);
    await expect(checkTurnInput(input({ text: '', files: [{ path: '/ann/a.txt' }] }), storage, 'ann')).resolves.toEqual(['/ann/a.txt']);
    await expect(checkTurnInput(input({ text: '', action: 'confirm' }), storage, 'ann')).resolves.toEqual([]);
  });
  it('the request hash ignores the request id and names what was asked', () => {
    expect(requestHash(input({ requestId: 'a' }))).toBe(requestHash(input({ requestId: 'b' })));
    expect(requestHash(input())).not.toBe(requestHash(input({ text: 'other' })));
    expect(requestHash(input())).not.toBe(requestHash(input({ conversationId: '0b6f2c1e-8a6e-4f4e-9d1c-2a3b4c5d6e7f' })));
    expect(replayDecision({ storedHash: 'x', hash: 'x' })).toBe('replay');
    expect(replayDecision({ storedHash: 'x', hash: 'y' })).toBe('conflict');
  });
});

describe('recovery decisions', () => {
  const cases: Array<[string, LedgerEvent[], boolean]> = [
    ['nothing', [], false],
    ['approved, tool not run', [ev('approval.requested'), ev('approval.resolved', { result: 'confirmed' })], true],
    ['approved, tool reported', [ev('approval.resolved', { result: 'confirmed' }), ev('tool.call'), ev('tool.result')], false],
    ['denied', [ev('approval.resolved', { result: 'denied' })], false],
    ['approved earlier, then a new approval approved and pending', [ev('approval.resolved', { result: 'confirmed' }), ev('tool.result'), ev('approval.resolved', { result: 'confirmed' })], true],
  ];
  it.each(cases)('awaitsApprovedTool: %s', (_n, events, expected) => {
    expect(awaitsApprovedTool(events)).toBe(expected);
  });
  it('endsInProgress: an approver counted last (M-of-N), nothing decided after it', () => {
    expect(endsInProgress([ev('approval.requested'), ev('approval.approved')])).toBe(true);
    expect(endsInProgress([ev('approval.approved'), ev('approval.resolved', { result: 'confirmed' })])).toBe(false);
    expect(endsInProgress([ev('approval.approved'), ev('tool.call')])).toBe(false);
    expect(endsInProgress([ev('user.message'), ev('tool.call')])).toBe(false);
  });
  it('countTurns counts tool rounds', () => {
    expect(countTurns([ev('user.message'), ev('tool.call'), ev('tool.call'), ev('tool.result'), ev('tool.result'), ev('tool.call')])).toBe(2);
  });
});
