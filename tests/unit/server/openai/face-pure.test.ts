/**
 * The OpenAI face's pure parts (issue 43 item 4): what a request gives the run (only the last user
 * message is new input; system text is the caller's; the prefix finds the conversation), the
 * transcript key, the words of a pause, and OpenAI's error envelope around taxonomy codes.
 */
import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../../../server/errors.ts';
import { transcriptKey } from '../../../../server/openai/conversation.ts';
import { noticeText } from '../../../../server/openai/notice.ts';
import { parseChatRequest } from '../../../../server/openai/request.ts';
import { chunkBody, errorBody } from '../../../../server/openai/wire.ts';

const ID = '3f1c8a2e-1b2c-4d5e-8f90-123456789abc';

describe('parseChatRequest', () => {
  it('takes the last user message as input, system and developer text as the caller\'s, and the user/assistant prefix', () => {
    const input = parseChatRequest({
      model: 'anything',
      user: 'never-read',
      tools: [{ type: 'function', function: { name: 'deploy_service' } }],
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'deploy_service', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c', content: 'approved' },
        { role: 'developer', content: [{ type: 'text', text: 'Cite.' }] },
        { role: 'user', content: [{ type: 'text', text: 'deploy ' }, { type: 'image_url', image_url: { url: 'x' } }, { type: 'text', text: 'it' }] },
        { role: 'assistant', content: 'trailing, ignored' },
      ],
    }, {});
    expect(input).toEqual({ text: 'deploy it', system: 'Be brief.\n\nCite.', prior: [{ role: 'user', text: 'hello' }, { role: 'assistant', text: '' }], conversationId: null, stream: false, includeUsage: false });
  });

  it('names the conversation by the body field, else the header; refuses what is not a UUID', () => {
    const ask = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    expect(parseChatRequest({ ...ask, conversation_id: ID.toUpperCase() }, { 'x-airlock-conversation-id': '00000000-0000-4000-8000-000000000000' }).conversationId).toBe(ID);
    expect(parseChatRequest(ask, { 'x-airlock-conversation-id': ID }).conversationId).toBe(ID);
    expect(() => parseChatRequest(ask, { 'x-airlock-conversation-id': 'nope' })).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
    expect(() => parseChatRequest({ ...ask, conversation_id: 'nope' }, {})).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
  });

  it('refuses no messages, no model, no user text, NUL and deep nesting as VALIDATION_ERROR', () => {
    for (const body of [undefined, {}, { model: 'm', messages: [] }, { messages: [{ role: 'user', content: 'hi' }] }, { model: 'm', messages: [{ role: 'assistant', content: 'hi' }] }, { model: 'm', messages: [{ role: 'user', content: 'a\u0000b' }] }, { model: 'm', messages: [{ role: 'user', content: 'hi', x: JSON.parse('['.repeat(80) + ']'.repeat(80)) }] }]) {
      expect(() => parseChatRequest(body, {}), JSON.stringify(body)?.slice(0, 80)).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
    }
  });
});

describe('transcriptKey', () => {
  it('is stable, per role and text, trimmed, and in the alias namespace', () => {
    const a = transcriptKey([{ role: 'user', text: 'hi' }, { role: 'assistant', text: 'hello ' }]);
    expect(a).toBe(transcriptKey([{ role: 'user', text: ' hi' }, { role: 'assistant', text: 'hello' }]));
    expect(a).not.toBe(transcriptKey([{ role: 'assistant', text: 'hi' }, { role: 'user', text: 'hello' }]));
    // One message's text cannot pass for two messages.
    expect(a).not.toBe(transcriptKey([{ role: 'user', text: 'hi"]\n["assistant","hello' }]));
    expect(a).toMatch(/^openai#[A-Za-z0-9_-]{43}$/);
    expect(a.length).toBeLessThanOrEqual(128);
  });
});

describe('noticeText', () => {
  it('says the prompt, the inbox and, for an approver, the link', () => {
    expect(noticeText('https://airlock.example', 'Deploy checkout-api 3.1.4 to staging?', null)).toBe('\n\nWaiting for approval: Deploy checkout-api 3.1.4 to staging. Decide at https://airlock.example/approvals.\n\n');
    expect(noticeText('https://a.example', 'Run it.', 'tok_123')).toContain('Decide at https://a.example/approvals, or with your one-use decision link https://a.example/approve/tok_123.');
  });
});

describe('errorBody', () => {
  it('is OpenAI\'s envelope: the message, OpenAI\'s type for the status, the param, the taxonomy code', () => {
    const invalid = new AirlockError('VALIDATION_ERROR', 'The request body is not valid.', { details: [{ path: 'messages', message: 'must hold at least one message', location: 'body' }] });
    expect(errorBody(invalid)).toEqual({ error: { message: 'The request body is not valid. messages: must hold at least one message', type: 'invalid_request_error', param: 'messages', code: 'VALIDATION_ERROR' } });
    expect(errorBody(new AirlockError('UNAUTHORIZED')).error).toMatchObject({ type: 'authentication_error', param: null, code: 'UNAUTHORIZED' });
    expect(errorBody(new AirlockError('RATE_LIMITED')).error.type).toBe('rate_limit_error');
    expect(errorBody(new AirlockError('LLM_UNAVAILABLE')).error.type).toBe('server_error');
  });
});

describe('chunkBody', () => {
  const scope = { id: 'chatcmpl-1', created: 1, conversationId: ID };
  it('carries a delta, or the end, or (usage) no choices', () => {
    expect(chunkBody(scope, { content: 'Hi' }).choices).toEqual([{ index: 0, delta: { content: 'Hi' }, logprobs: null, finish_reason: null }]);
    expect(chunkBody(scope, { finish: 'stop' }).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(chunkBody(scope, { usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } })).toMatchObject({ choices: [], usage: { total_tokens: 0 }, conversation_id: ID });
  });
});
