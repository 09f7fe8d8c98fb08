/**
 * The headless API's pure parts, from tables: status mapping, tool policy, visibility, request
 * parsing, the event projection and replay paging.
 */
import { describe, expect, it } from 'vitest';
import { runAllowsTool, runToolRefusal } from '../../../../server/agent/run-tool-allowlist.ts';
import { durableEvents, liveNumbering, ledgerBody, liveBody, pageEvents } from '../../../../server/v1/agent-events.ts';
import { mergeTokens } from '../../../../server/v1/completions.ts';
import { canDecide } from '../../../../server/approvals/service.ts';
import { assertUserKey, canSee, userKeyOf, type V1Caller } from '../../../../server/v1/identity.ts';
import { jobSchemaFor } from '../../../../server/v1/job-queue.ts';
import { RUN_STATUSES, runStatus, statusPairs } from '../../../../server/v1/run-status.ts';
import { parseRunRequest } from '../../../../server/v1/schemas.ts';
import type { LedgerEvent } from '../../../../server/engine/index.ts';

describe('runStatus', () => {
  const table: Array<[string, string | null, string]> = [
    ['queued', null, 'queued'],
    ['queued', 'failed', 'queued'], // a retry is on its way
    ['cancelled', null, 'cancelled'],
    ['cancelled', 'done', 'cancelled'],
    ['failed', null, 'failed'],
    ['running', null, 'running'],
    ['running', 'running', 'running'],
    ['running', 'paused', 'awaiting_approval'],
    ['running', 'done', 'completed'],
    ['running', 'failed', 'failed'],
    ['running', 'cancelled', 'cancelled'],
  ];
  for (const [row, turn, expected] of table) {
    it(`row ${row}, turn ${turn} -> ${expected}`, () => {
      expect(runStatus({ rowStatus: row as never, lastTurn: turn ? { status: turn as never } : null })).toBe(expected);
    });
  }
});

describe('runAllowsTool', () => {
  const table: Array<[unknown, string, boolean]> = [
    [null, 'deploy_service', true],
    [{ mode: 'none' }, 'check_health', false],
    [{ mode: 'allowlist', allowedTools: ['check_health'] }, 'check_health', true],
    [{ mode: 'allowlist', allowedTools: ['check_health'] }, 'deploy_service', false],
    [{ mode: 'allowlist', allowedTools: [] }, 'check_health', false],
  ];
  for (const [policy, tool, expected] of table) {
    it(`${JSON.stringify(policy)} ${tool} -> ${expected}`, () => expect(runAllowsTool(policy as never, tool)).toBe(expected));
  }
  it('says why a call was refused', () => {
    expect(runToolRefusal({ mode: 'none' }, 'x').message).toContain('allows no tools');
    expect(runToolRefusal({ mode: 'allowlist', allowedTools: [] }, 'x').message).toContain('allowed_tools');
  });
});

describe('visibility and deciding', () => {
  const caller = (role: string, tenant = 'demo', userId = 'u1'): V1Caller =>
    ({ userId, username: 'u', role, tenant, userKey: userKeyOf(tenant, 'u'), userToken: 't', authProvider: 'user_token' }) as V1Caller;
  const table: Array<[V1Caller, { tenant: string; userId: string }, boolean]> = [
    [caller('viewer'), { tenant: 'demo', userId: 'u1' }, true],
    [caller('viewer'), { tenant: 'demo', userId: 'u2' }, false],
    [caller('operator'), { tenant: 'demo', userId: 'u2' }, false],
    [caller('admin'), { tenant: 'demo', userId: 'u2' }, true],
    [caller('admin'), { tenant: 'acme', userId: 'u2' }, false],
    [caller('viewer', 'acme'), { tenant: 'demo', userId: 'u1' }, false], // same id, other tenant
  ];
  for (const [who, owner, expected] of table) {
    it(`${who.role}@${who.tenant} sees ${owner.userId}@${owner.tenant}: ${expected}`, () => {
      expect(canSee(who, owner)).toBe(expected);
      expect(canDecide(who, { tenant: owner.tenant, requestedBy: owner.userId })).toBe(expected);
    });
  }
  it('user_key must be the caller\'s own', () => {
    expect(() => assertUserKey(caller('viewer'), undefined)).not.toThrow();
    expect(() => assertUserKey(caller('viewer'), 'demo:u')).not.toThrow();
    expect(() => assertUserKey(caller('viewer'), 'demo:admin')).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
    expect(() => assertUserKey(caller('viewer'), 'acme:u')).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
  });
});

describe('parseRunRequest', () => {
  it('takes the last user message, joins system messages, normalises the policy', () => {
    const r = parseRunRequest({
      messages: [{ role: 'system', content: 'A' }, { role: 'user', content: 'first' }, { role: 'system', content: [{ type: 'text', text: 'B' }] }, { role: 'user', content: ' second ' }],
      tool_policy: { mode: 'allowlist', allowed_tools: ['x', 'x', 'y'], scope: { mode: 'hard' } },
      metadata: { run_id: '00000000-0000-4000-8000-000000000001', caller: 'pska' },
      model: 'ignored',
    });
    expect(r).toMatchObject({ text: 'second', system: 'A\n\nB', toolPolicy: { mode: 'allowlist', allowedTools: ['x', 'y'] }, runId: '00000000-0000-4000-8000-000000000001', stream: false });
  });
  const bad: unknown[] = [null, {}, { messages: [] }, { messages: [{ role: 'user', content: '' }] }, { messages: [{ role: 'robot', content: 'x' }] }, { messages: [{ role: 'user', content: 'x' }], metadata: { run_id: 'a b' } }, { messages: [{ role: 'user', content: 'x' }], metadata: { run_id: 'x'.repeat(129) } }, { messages: [{ role: 'user', content: 'x' }], session_id: 'a/b' }, { messages: [{ role: 'user', content: 'x' }], stream_until: 'forever' }, { messages: [{ role: 'user', content: 'x' }], tool_policy: { mode: 'allowlist' } }];
  it('takes opaque ids (issue 24): run_id and session_id of [A-Za-z0-9._:-], 1-128', () => {
    const r = parseRunRequest({ messages: [{ role: 'user', content: 'x' }], session_id: 'pska:s-1.a_b', metadata: { run_id: 'pska:run.1' } });
    expect(r).toMatchObject({ runId: 'pska:run.1', sessionId: null, sessionRef: 'pska:s-1.a_b', streamUntil: 'end' });
    const u = parseRunRequest({ messages: [{ role: 'user', content: 'x' }], session_id: '00000000-0000-4000-8000-00000000000A' });
    expect(u).toMatchObject({ sessionId: '00000000-0000-4000-8000-00000000000a', sessionRef: null });
  });
  for (const body of bad) {
    it(`refuses ${JSON.stringify(body)}`, () => expect(() => parseRunRequest(body)).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' })));
  }
  const nest = (levels: number) => {
    let v: Record<string, unknown> = {};
    for (let i = 1; i < levels; i++) v = { d: v };
    return v;
  };
  const user = [{ role: 'user', content: 'x' }];
  it.each([
    ['NUL in the content', { messages: [{ role: 'user', content: 'a\u0000b' }] }, /^messages\.0\.content: .*NUL/],
    ['NUL in a metadata key', { messages: user, metadata: { 'k\u0000': 1 } }, /^metadata\.k\u0000: .*NUL/],
    ['metadata 33 levels deep', { messages: user, metadata: nest(33) }, /^metadata\.(d\.){31}d: must not nest deeper than 32 levels$/],
    ['a body nested 5,000 deep', { messages: user, extra: nest(5_000) }, /must not nest deeper than 64 levels/],
  ])('refuses %s (issue 30: PostgreSQL would refuse it)', (_name, body, message) => {
    expect(() => parseRunRequest(body)).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR', message: expect.stringMatching(message) }));
  });
  it('accepts metadata 32 levels deep', () => expect(parseRunRequest({ messages: user, metadata: nest(32) }).metadata).toEqual(nest(32)));
});

const RUN = '00000000-0000-4000-8000-0000000000aa';
const at = '2026-01-01T00:00:00.000Z';
const ev = (seq: number, kind: string, payload: Record<string, unknown>): LedgerEvent => ({ seq, kind, payload: { run_id: RUN, ...payload }, conversation_id: 'c', run_id: RUN, created_at: at }) as LedgerEvent;

describe('event projection', () => {
  const table: Array<[LedgerEvent, string | null]> = [
    [ev(1, 'user.message', { request_id: 'r', text: 'hi', files: [] }), null],
    [ev(2, 'tool.call', { tool_call_id: 'c1', tool: 'check_health', input: { service: 'a' } }), 'tool_call'],
    [ev(3, 'tool.result', { tool_call_id: 'c1', tool: 'check_health', status: 'done', output: { ok: true }, duration_ms: 3 }), 'tool_result'],
    [ev(4, 'assistant.message', { text: 'answer' }), 'token'],
    [ev(5, 'assistant.message', { text: '' }), null],
    [ev(6, 'assistant.message', { text: 'part', error: { code: 'LLM_UNAVAILABLE', detail: 'down' } }), 'error'],
    [ev(7, 'approval.requested', { approval_id: RUN, tool: 'deploy_service', input: {}, prompt: 'Deploy?', expires_at: at, timeout_s: 300 }), 'ask_user'],
    [ev(8, 'approval.resolved', { approval_id: RUN, result: 'expired' }), 'approval_resolved'],
    [ev(9, 'run.finished', { status: 'paused', turns: 1, duration_ms: 5, stop_reason: 'approval_required', error_code: null }), 'session_end'],
  ];
  for (const [event, type] of table) {
    it(`${event.kind} -> ${type}`, () => expect(ledgerBody(event, { live: false })?.type ?? null).toBe(type));
  }
  it('live: answer text came as token deltas, so a committed answer is not repeated', () => {
    expect(liveBody(ev(4, 'assistant.message', { text: 'answer' }))).toBeNull();
    expect(liveBody({ kind: 'partial', payload: { run_id: RUN, token: 'an' } })).toMatchObject({ type: 'token', content: 'an' });
  });
  it('maps statuses and ask_user fields', () => {
    expect(ledgerBody(table[8][0], { live: false })).toMatchObject({ status: 'awaiting_approval' });
    expect(ledgerBody(table[6][0], { live: false })).toMatchObject({ approval_request_id: RUN, metadata: { request_id: RUN, timeout_seconds: 300, expires_at: at } });
  });
  it("carries the policy decision of the call into ask_user and tool_call (the built-in rule when the event has none)", () => {
    const policy = { scope: 'user:demo:admin', action: 'caution' as const, matched: true };
    expect(ledgerBody(table[6][0], { live: false })?.metadata).toMatchObject({ policy_scope: 'builtin', policy_action: 'require_approval', policy_matched: false });
    const paused = ev(7, 'approval.requested', { approval_id: RUN, tool: 'deploy_service', input: {}, prompt: 'Deploy?', expires_at: at, timeout_s: 300, policy: { ...policy, action: 'require_approval' } });
    expect(ledgerBody(paused, { live: false })?.metadata).toMatchObject({ policy_scope: 'user:demo:admin', policy_action: 'require_approval', policy_matched: true });
    const call = ev(2, 'tool.call', { tool_call_id: 'c1', tool: 'check_health', input: {}, policy });
    expect(ledgerBody(call, { live: false })?.metadata).toEqual({ policy_scope: 'user:demo:admin', policy_action: 'caution', policy_matched: true });
  });
  it('numbers durable events from 1 after session_start, and pages them', () => {
    const events = durableEvents({ runId: RUN, sessionId: 'c' }, { createdAt: new Date(at), text: 'hi', userKey: 'demo:u', metadata: {} }, table.map(([e]) => e));
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]).toMatchObject({ type: 'session_start', event_id: `${RUN}:1`, schema: 'fastreact.agent_event.v1' });
    expect(pageEvents(events, 0, 3)).toMatchObject({ count: 3, total_event_count: events.length, next_after_sequence: 3, has_more: true });
    expect(pageEvents(events, events.length - 1, 3)).toMatchObject({ count: 1, next_after_sequence: events.length, has_more: false });
    expect(pageEvents(events, events.length, 3)).toMatchObject({ count: 0, next_after_sequence: events.length, has_more: false });
  });
  it('merges the token deltas of one segment (one sequence) into the replayed token', () => {
    const base = durableEvents({ runId: RUN, sessionId: 'c' }, { createdAt: new Date(at), text: 'hi', userKey: 'demo:u', metadata: {} }, []);
    const tok = (content: string, sequence: number) => ({ ...base[0], type: 'token', content, sequence });
    expect(mergeTokens([base[0], tok('a', 2), tok('b', 2), tok('c', 3), { ...base[0], type: 'session_end', sequence: 4 }]).map((e) => [e.type, e.sequence, e.content])).toEqual([
      ['session_start', 1, 'hi'],
      ['token', 2, 'ab'],
      ['token', 3, 'c'],
      ['session_end', 4, 'hi'],
    ]);
  });
  it('numbers a live stream as the replay numbers it: the same sequence for the same event', () => {
    const partial = (token: string) => ({ kind: 'partial', payload: { run_id: RUN, token } }) as const;
    // A turn as the engine streams it: deltas, then the segment committed before the tool call;
    // more deltas, an errored segment, a paused end. user.message and empty segments are not shown.
    const committed = [
      ev(1, 'user.message', { request_id: 'r', text: 'hi', files: [] }),
      ev(2, 'assistant.message', { text: 'Let me check.' }),
      ev(3, 'tool.call', { tool_call_id: 'c1', tool: 'check_health', input: {} }),
      ev(4, 'tool.result', { tool_call_id: 'c1', tool: 'check_health', status: 'done', output: {}, duration_ms: 1 }),
      ev(5, 'assistant.message', { text: '' }),
      ev(6, 'tool.call', { tool_call_id: 'c2', tool: 'deploy_service', input: {} }),
      ev(7, 'assistant.message', { text: 'It is', error: { code: 'LLM_UNAVAILABLE', detail: 'down' } }),
      ev(8, 'run.finished', { status: 'failed', turns: 2, duration_ms: 5, stop_reason: 'error', error_code: 'LLM_UNAVAILABLE' }),
    ];
    const live = [partial('Let me'), partial(' check.'), committed[0], committed[1], committed[2], committed[3], committed[4], committed[5], partial('It'), partial(' is'), committed[6], committed[7]];
    const number = liveNumbering({ runId: RUN, sessionId: 'c' });
    const streamed = live.map((e) => number(e)).filter((e) => e !== null);
    const replayed = durableEvents({ runId: RUN, sessionId: 'c' }, { createdAt: new Date(at), text: 'hi', userKey: 'demo:u', metadata: {} }, committed);
    const bySequence = new Map(replayed.map((e) => [e.sequence, e]));
    // Every committed event live has the replay's sequence and type.
    for (const e of streamed.filter((x) => x.type !== 'token')) expect(bySequence.get(e.sequence)?.type).toBe(e.type);
    // Deltas carry the sequence of the event that records their text: the token, or the error.
    expect(streamed.filter((x) => x.type === 'token').map((x) => [x.sequence, x.content])).toEqual([[2, 'Let me'], [2, ' check.'], [6, 'It'], [6, ' is']]);
    expect(bySequence.get(2)).toMatchObject({ type: 'token', content: 'Let me check.' });
    expect(bySequence.get(6)).toMatchObject({ type: 'error', metadata: { partial_content: 'It is' } });
    // Merged, the live events are the replay.
    expect(mergeTokens(streamed).filter((e) => e.type !== 'token').map((e) => [e.sequence, e.type])).toEqual(replayed.filter((e) => e.type !== 'token' && e.type !== 'session_start').map((e) => [e.sequence, e.type]));
    expect(mergeTokens(streamed).find((e) => e.type === 'token')).toMatchObject({ sequence: 2, content: 'Let me check.' });
  });
});

describe('statusPairs (the SQL filter of GET /runs?status=)', () => {
  it('is runStatus inverted: each pair maps back to its status, and the statuses partition every pair', () => {
    const all = RUN_STATUSES.flatMap((status) => statusPairs(status).map((p) => ({ status, p })));
    for (const { status, p } of all) expect(runStatus({ rowStatus: p.row, lastTurn: p.turn ? { status: p.turn } : null })).toBe(status);
    // 4 row statuses x (no turn + 5 turn statuses), each under exactly one status.
    expect(new Set(all.map(({ p }) => `${p.row}/${p.turn}`)).size).toBe(24);
    expect(all).toHaveLength(24);
  });
  it('row by row', () => {
    expect(statusPairs('awaiting_approval')).toEqual([{ row: 'running', turn: 'paused' }]);
    expect(statusPairs('completed')).toEqual([{ row: 'running', turn: 'done' }]);
    expect(statusPairs('running')).toEqual([{ row: 'running', turn: null }, { row: 'running', turn: 'running' }]);
    expect(statusPairs('queued')).toHaveLength(6);
    expect(statusPairs('cancelled')).toContainEqual({ row: 'running', turn: 'cancelled' });
    expect(statusPairs('failed')).toContainEqual({ row: 'failed', turn: null });
  });
});

describe('jobSchemaFor', () => {
  it('gives each database schema its own queue schema', () => {
    expect(jobSchemaFor('public')).toBe('pgboss');
    expect(jobSchemaFor('t_abc')).toBe('t_abc_pgboss');
  });
});
