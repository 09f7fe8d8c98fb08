/** RunAgentInput -> engine turns, and the Last-Event-ID header, from tables. */
import { describe, expect, it } from 'vitest';
import { AgUiRunInput, lastEventId, requestOf, turnsOf } from '../../../../server/ag-ui/input.ts';
import { isAirlockError } from '../../../../server/errors.ts';

const THREAD = '7d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const A = '5e0c8a54-3c1f-4a7e-9b2d-1f2e3d4c5b6a';
const B = '6f1d9b65-4d20-4b8f-8c3e-2a3f4e5d6c7b';
const user = (content: unknown, id = 'u') => ({ id, role: 'user', content });
const parse = (over: Record<string, unknown>) => AgUiRunInput.parse({ threadId: THREAD, runId: 'run-1', messages: [], ...over });

const turnsFor = (input: AgUiRunInput) => turnsOf(input, requestOf(input), THREAD);

function code(f: () => unknown): string {
  try {
    f();
    return 'ok';
  } catch (error) {
    return isAirlockError(error) ? error.code : String(error);
  }
}

describe('turnsOf', () => {
  it('a new message: the last user message, trimmed; the runId is the request_id', () => {
    const input = parse({ messages: [user('old'), { id: 'a', role: 'assistant', content: 'answer' }, user([{ type: 'text', text: ' new ' }, { type: 'text', text: 'one' }], 'u2')] });
    expect(requestOf(input)).toEqual({ message: { text: 'new one', clientMessageId: 'u2' }, decisions: [] });
    // The client's id of the message goes with the turn (the ledger's user.message keeps it).
    expect(turnsFor(input)).toEqual([
      { text: 'new one', clientMessageId: 'u2', files: [], conversationId: THREAD, action: null, approvalId: null, requestId: 'run-1', origin: { method: 'POST', path: '/api/agent/ag-ui', channel: 'ag-ui' } },
    ]);
  });

  const resume: Array<[string, unknown[], Array<[string | null, string]>]> = [
    ['approved', [{ interruptId: A, status: 'resolved', payload: { approved: true } }], [['confirm', A]]],
    ['refused with a reason', [{ interruptId: A, status: 'resolved', payload: { approved: false, reason: 'no' } }], [['deny', A]]],
    ['cancelled', [{ interruptId: A, status: 'cancelled' }], [['deny', A]]],
    ['two, in order', [{ interruptId: A, status: 'cancelled' }, { interruptId: B, status: 'resolved', payload: { approved: true } }], [['deny', A], ['confirm', B]]],
  ];
  it.each(resume)('resume %s: one decision per entry, exactly the approval it names', (_n, entries, expected) => {
    const turns = turnsFor(parse({ messages: [user('ignored')], resume: entries }));
    expect(turns.map((t) => [t.action, t.approvalId])).toEqual(expected);
    expect(turns.every((t) => t.text === '')).toBe(true);
    // The last turn is the AG-UI run (replay and reconnect find it); earlier ones are derived.
    expect(turns.at(-1)!.requestId).toBe('run-1');
    expect(new Set(turns.map((t) => t.requestId)).size).toBe(turns.length);
  });

  it('a resume carries a deny reason (told to the model) and an approval grant (issue 27)', () => {
    const [deny] = turnsFor(parse({ messages: [user('x')], resume: [{ interruptId: A, status: 'resolved', payload: { approved: false, reason: ' not now ' } }] }));
    expect(deny).toMatchObject({ action: 'deny', approvalId: A, decisionNote: 'not now' });
    const [grant] = turnsFor(parse({ messages: [user('x')], resume: [{ interruptId: A, status: 'resolved', payload: { approved: true, grant: { ttl_s: 3600, scope: 'user' } } }] }));
    expect(grant).toMatchObject({ action: 'confirm', approvalId: A, grant: { ttl_s: 3600, scope: 'user' } });
  });

  const invalid: Array<[string, Record<string, unknown>]> = [
    ['a grant on a deny', { resume: [{ interruptId: A, status: 'resolved', payload: { approved: false, grant: { ttl_s: 60 } } }] }],
    ['a grant over 8 h', { resume: [{ interruptId: A, status: 'resolved', payload: { approved: true, grant: { ttl_s: 8 * 3600 + 1 } } }] }],
    ['a grant with an unknown field', { resume: [{ interruptId: A, status: 'resolved', payload: { approved: true, grant: { ttl_s: 60, forever: true } } }] }],
    ['no user message', { messages: [{ id: 'a', role: 'assistant', content: 'hi' }] }],
    ['an empty user message', { messages: [user('  ')] }],
    ['media', { messages: [user([{ type: 'image', source: { type: 'url', value: 'https://x/y.png' } }])] }],
    ['an interrupt id that is not ours', { resume: [{ interruptId: 'x', status: 'cancelled' }] }],
    ['a payload without approved', { resume: [{ interruptId: A, status: 'resolved', payload: { yes: 1 } }] }],
    ['a resolved entry without payload', { resume: [{ interruptId: A, status: 'resolved' }] }],
    ['the same interrupt twice', { resume: [{ interruptId: A, status: 'cancelled' }, { interruptId: A, status: 'cancelled' }] }],
    ['a message id over 256 characters', { messages: [user('hello', 'm'.repeat(257))] }],
  ];
  it.each(invalid)('%s is VALIDATION_ERROR', (_n, over) => {
    expect(code(() => requestOf(parse(over)))).toBe('VALIDATION_ERROR');
  });

  it('the schema takes any threadId of 1-128 characters without control characters; refuses an empty or overlong runId', () => {
    for (const threadId of ['x', 'thread_abc123', 't'.repeat(128), 'ünï côdé / with spaces']) expect(AgUiRunInput.safeParse({ threadId, runId: 'r', messages: [] }).success, threadId).toBe(true);
    for (const threadId of ['', 't'.repeat(129), 'a\u0000b', 'a\nb', 'a\u007fb', 'a\u0085b', 42]) expect(AgUiRunInput.safeParse({ threadId, runId: 'r', messages: [] }).success, String(threadId)).toBe(false);
    expect(AgUiRunInput.safeParse({ threadId: THREAD, runId: ' ', messages: [] }).success).toBe(false);
    expect(AgUiRunInput.safeParse({ threadId: THREAD, runId: 'r'.repeat(181), messages: [] }).success).toBe(false);
    expect(AgUiRunInput.safeParse({ threadId: THREAD, runId: 'r', messages: [], resume: [{ interruptId: A, status: 'later' }] }).success).toBe(false);
  });
});

describe('lastEventId', () => {
  it.each([
    [undefined, null],
    ['0', 0],
    [' 42 ', 42],
    [['7', '8'], 7],
  ] as const)('%j -> %j', (header, expected) => expect(lastEventId(header as string | string[] | undefined)).toBe(expected));
  it.each(['', 'x', '-1', '1.5', '9'.repeat(16)])('%j is VALIDATION_ERROR', (header) => expect(code(() => lastEventId(header))).toBe('VALIDATION_ERROR'));
});
