import { describe, expect, it } from 'vitest';
import { asksNewConversation, ChatInputError, normalizeChatInput } from '../../../../server/chat/input.ts';

const ID = '0b6f2c1e-8a6e-4f4e-9d1c-2a3b4c5d6e7f';

describe('normalizeChatInput', () => {
  const cases: Array<[string, unknown[], unknown, ReturnType<typeof normalizeChatInput>]> = [
    ['positional multimodal', [{ text: 'hi', files: [] }, ID, null, null, null], undefined, { text: 'hi', files: [], conversationId: ID, action: null, requestId: null, approvalId: null }],
    ['keyword with defaults', [{ text: 'hi', files: [] }, ID, null, '', null], undefined, { text: 'hi', files: [], conversationId: ID, action: null, requestId: null, approvalId: null }],
    ['plain string message', ['  hello  ', null, null, null, null], undefined, { text: 'hello', files: [], conversationId: null, action: null, requestId: null, approvalId: null }],
    ['ADR shape: text/files slots + event_data', [null, null, null, 'hi', []], [ID, null], { text: 'hi', files: [], conversationId: ID, action: null, requestId: null, approvalId: null }],
    ['ADR confirm shape', ['confirm', ID, 'confirm', null, null], [ID, 'confirm'], { text: 'confirm', files: [], conversationId: ID, action: 'confirm', requestId: null, approvalId: null }],
    ['action from event_data only', ['deny', null, null, null, null], [ID, 'deny'], { text: 'deny', files: [], conversationId: ID, action: 'deny', requestId: null, approvalId: null }],
    ['slots win over event_data', [{ text: 'x' }, ID, null, null, null], ['ignored', 'confirm'], { text: 'x', files: [], conversationId: ID, action: 'confirm', requestId: null, approvalId: null }],
    [
      'files as FileData and paths',
      [{ text: 'see', files: [{ path: '/up/abc/a.png', orig_name: 'C:\\tmp\\a.png', meta: { _type: 'gradio.FileData' } }, '/up/def/b.txt'] }, null, null, null, null],
      null,
      { text: 'see', files: [{ path: '/up/abc/a.png', orig_name: 'a.png' }, { path: '/up/def/b.txt' }], conversationId: null, action: null, requestId: null, approvalId: null },
    ],
    [
      'request_id and approval_id slots',
      ['confirm', ID, 'confirm', null, null, 'req-1', ID],
      null,
      { text: 'confirm', files: [], conversationId: ID, action: 'confirm', requestId: 'req-1', approvalId: ID },
    ],
    [
      'arguments, grant and message_id slots (JSON text or parsed)',
      ['confirm', ID, 'confirm', null, null, null, ID, '{"version":"2.4.1"}', { ttl_s: 3600 }, ID],
      null,
      { text: 'confirm', files: [], conversationId: ID, action: 'confirm', requestId: null, approvalId: ID, editedArgs: { version: '2.4.1' }, grant: { ttl_s: 3600 }, messageId: ID },
    ],
    [
      'a deny with a reason in the text slot (issue 27 item 4): the decision note',
      [null, ID, 'deny', ' use the canary first ', null, null, ID],
      null,
      { text: 'use the canary first', files: [], conversationId: ID, action: 'deny', requestId: null, approvalId: ID, decisionNote: 'use the canary first' },
    ],
  ];
  it.each(cases)('%s', (_name, data, eventData, expected) => {
    expect(normalizeChatInput(data, eventData)).toEqual(expected);
  });

  const bad: Array<[string, unknown[], unknown, RegExp]> = [
    ['conversation id not a uuid', [{ text: 'x' }, 'abc', null], null, /conversation_id/],
    ['unknown action', [{ text: 'x' }, ID, 'approve'], null, /action/],
    ['message of a wrong type', [42, null, null], null, /message/],
    ['approval id not a uuid', ['confirm', ID, 'confirm', null, null, null, 'first'], null, /approval_id/],
    ['request id too long', [{ text: 'x' }, null, null, null, null, 'r'.repeat(201)], null, /request_id/],
    ['request_id of a wrong type', [{ text: 'x' }, null, null, null, null, 42], null, /request_id/],
    ['NUL in the request_id', [{ text: 'x' }, null, null, null, null, 'r\u0000id'], null, /request_id: .*NUL/],
    ['arguments that are not JSON', ['confirm', ID, 'confirm', null, null, null, ID, '{version'], null, /arguments: must be JSON/],
    ['arguments that are not an object', ['confirm', ID, 'confirm', null, null, null, ID, [1, 2]], null, /arguments/],
    ['a grant with an unknown field', ['confirm', ID, 'confirm', null, null, null, ID, null, { ttl_s: 60, forever: true }], null, /grant/],
    ['a grant with a deny', [null, ID, 'deny', null, null, null, ID, null, { ttl_s: 60 }], null, /grant: only with action "confirm"/],
    ['a grant with a new message', [{ text: 'x' }, ID, null, null, null, null, null, null, { ttl_s: 60 }], null, /grant: only with action "confirm"/],
    ['a deny reason over 2000 characters', [null, ID, 'deny', 'r'.repeat(2001)], null, /deny reason/],
    ['a grant longer than 8 h', ['confirm', ID, 'confirm', null, null, null, ID, null, { ttl_s: 8 * 3600 + 1 }], null, /grant.ttl_s/],
    ['message id not a uuid', [{ text: 'x' }, ID, null, null, null, null, null, null, null, 'm1'], null, /message_id/],
    ['too many files', [{ text: 'x', files: Array.from({ length: 11 }, (_, i) => `/f${i}`) }], null, /files/],
    ['NUL in the text', [{ text: 'a\u0000b' }], null, /NUL/],
    ['NUL in a plain-string message', ['a\u0000b'], null, /NUL/],
    ['NUL in the ADR text slot', [null, null, null, 'a\u0000'], null, /NUL/],
    ['NUL in a file name', [{ text: 'x', files: [{ path: '/f', orig_name: 'a\u0000.txt' }] }], null, /files: .*NUL/],
  ];
  it.each(bad)('rejects %s', (_name, data, eventData, message) => {
    expect(() => normalizeChatInput(data, eventData)).toThrow(ChatInputError);
    expect(() => normalizeChatInput(data, eventData)).toThrow(message);
  });
});

describe('conversation_id "new" (issue 24 item 2: a new conversation within a Gradio session)', () => {
  it('is no conversation id, and says so in the data slot or event_data', () => {
    expect(normalizeChatInput([{ text: 'hi', files: [] }, 'new'], null).conversationId).toBeNull();
    expect(asksNewConversation([{ text: 'hi', files: [] }, 'new'], null)).toBe(true);
    expect(asksNewConversation([{ text: 'hi', files: [] }, null], ['new', null])).toBe(true);
    expect(asksNewConversation([{ text: 'hi', files: [] }, null], null)).toBe(false);
    expect(asksNewConversation([{ text: 'hi', files: [] }, ''], [null, null])).toBe(false);
  });

  it('any other non-UUID is still refused, naming "new"', () => {
    expect(() => normalizeChatInput([{ text: 'hi', files: [] }, 'New'], null)).toThrow(/conversation_id.*"new"/);
  });
});
