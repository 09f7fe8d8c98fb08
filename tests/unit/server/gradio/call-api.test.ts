import { describe, expect, it } from 'vitest';
import { keywordArgs, positionalArgs } from '../../../../server/gradio/call-args.ts';
import { translateFrames, type CallState } from '../../../../server/gradio/call-format.ts';
import { clearCookieLine, cookieName, readCookie, setCookieLine } from '../../../../server/gradio/cookie-session.ts';
import { encodeFrame, HEARTBEAT_FRAME, CLOSE_STREAM_FRAME, logMessage, processCompleted, processFailed, processGenerating, processStarts, progressMessage } from '../../../../server/gradio/encode.ts';
import { withCookieBearer } from '../../../../server/gradio/auth.ts';
import { mcpTools, outputText, toolError } from '../../../../server/gradio/mcp/tools.ts';
import type { EndpointDefinition } from '../../../../server/gradio/index.ts';

const endpoint: EndpointDefinition = {
  apiName: 'echo',
  inputs: [
    { name: 'message', label: 'Message', component: 'textbox' },
    { name: 'suffix', label: 'Suffix', component: 'textbox', default: '!' },
  ],
  outputs: [{ label: 'Response', component: 'json' }],
  handler: () => [null],
};

describe('translateFrames (session frames -> call-API events)', () => {
  it.each([
    ['process_starts', encodeFrame(processStarts('e')), ''],
    ['log', encodeFrame(logMessage('e', 'info', 'hi')), ''],
    ['progress', encodeFrame(progressMessage('e', [{ index: 1 }])), ''],
    ['heartbeat', HEARTBEAT_FRAME, 'event: heartbeat\ndata: null\n\n'],
    ['close_stream', CLOSE_STREAM_FRAME, ''],
    ['success', encodeFrame(processCompleted('e', ['done'])), 'event: complete\ndata: ["done"]\n\n'],
    ['failure', encodeFrame(processFailed('e', 'kaboom', 'Broken')), 'event: error\ndata: {"error":"kaboom","duration":null,"visible":true,"title":"Broken"}\n\n'],
    ['unexpected', 'data: {"msg":"unexpected_error","event_id":null,"message":"Session not found.","session_not_found":true,"success":false}\n\n', 'event: error\ndata: "Session not found."\n\n'],
    ['not JSON', 'data: ALIVE\n\n', ''],
  ])('%s', (_, frame, expected) => {
    expect(translateFrames(frame, { last: null })).toBe(expected);
  });

  it('applies diffs so every generating event carries full values, across concatenated frames', () => {
    const state: CallState = { last: null };
    const first = encodeFrame(processGenerating('e', [{ text: 'He' }]));
    const second = encodeFrame(processGenerating('e', [[['append', ['text'], 'llo']]] as never));
    expect(translateFrames(first + second, state)).toBe('event: generating\ndata: [{"text":"He"}]\n\nevent: generating\ndata: [{"text":"Hello"}]\n\n');
  });
});

describe('call bodies', () => {
  it.each([
    [{ data: ['a'] }, { data: ['a'] }],
    [{ data: ['a'], session_hash: 'mine' }, { data: ['a'] }],
    [{ data: 'a' }, { status: 422, detail: '`data` must be an array of input values.' }],
    [['a'], { status: 422, detail: 'The body must be a JSON object with a `data` array.' }],
  ])('positional %j', (body, expected) => {
    expect(positionalArgs(body)).toEqual(expected);
  });
  it.each([
    [{ message: 'hi' }, { data: ['hi', undefined] }],
    [{ suffix: '?', message: 'hi' }, { data: ['hi', '?'] }],
    [{ mesage: 'hi' }, { status: 422, detail: 'Unknown parameter(s) for /echo: mesage. Parameters: message, suffix.', parameter: 'mesage' }],
    [null, { status: 422, detail: 'The body must be a JSON object of parameters by name.' }],
  ])('keyword %j', (body, expected) => {
    expect(keywordArgs(endpoint, body)).toEqual(expected);
  });
});

describe('login cookie', () => {
  const name = cookieName('/api/agent/gradio');
  it('is named per mount, stably', () => {
    expect(name).toMatch(/^access-token-[0-9a-f]{16}$/);
    expect(cookieName('/api/agent/gradio')).toBe(name);
    expect(cookieName('/other')).not.toBe(name);
  });
  it.each([
    [`${name}=tok`, 'tok'],
    [`a=b; ${name}=tok; c=d`, 'tok'],
    // The JS client echoes the Set-Cookie line itself as its Cookie header.
    [`${name}=tok; Path=/api/agent/gradio; HttpOnly; SameSite=Lax`, 'tok'],
    [`${name}=`, null],
    ['other=tok', null],
    [`${name}=%E0%A4%A`, null],
    [undefined, null],
  ])('reads %j', (header, expected) => {
    expect(readCookie(header, name)).toBe(expected);
  });
  it('sets and clears with HttpOnly, SameSite=Lax, the mount path, Secure only over https', () => {
    expect(setCookieLine(name, 'a b', { path: '/m', secure: false })).toBe(`${name}=a%20b; Path=/m; HttpOnly; SameSite=Lax`);
    expect(setCookieLine(name, 't', { path: '/m', secure: true })).toMatch(/; Secure$/);
    expect(clearCookieLine(name, { path: '/m', secure: false })).toContain('Max-Age=0');
  });
  it('the cookie becomes a bearer only when no Authorization header is sent', () => {
    expect(withCookieBearer({ cookie: `${name}=tok` }, name).authorization).toBe('Bearer tok');
    expect(withCookieBearer({ cookie: `${name}=tok`, authorization: 'Bearer mine' }, name).authorization).toBe('Bearer mine');
    expect(withCookieBearer({ cookie: `${name}=tok` }, undefined).authorization).toBeUndefined();
  });
});

describe('MCP tools', () => {
  it('one tool per endpoint, inputs from /info, required = no default; mcp:false hides; parameters narrow', () => {
    const hidden = { ...endpoint, apiName: 'hidden', mcp: false as const };
    const narrowed = { ...endpoint, apiName: 'narrow', mcp: { parameters: { message: { type: 'string', description: 'Say it' } } } };
    expect(mcpTools([endpoint, hidden, narrowed])).toEqual([
      {
        name: 'echo',
        description: '',
        inputSchema: { type: 'object', properties: { message: { type: 'string', description: 'Message' }, suffix: { type: 'string', description: 'Suffix' } }, required: ['message'] },
      },
      { name: 'narrow', description: '', inputSchema: { type: 'object', properties: { message: { type: 'string', description: 'Say it' } }, required: ['message'] } },
    ]);
  });
  it.each([
    ['text', 'text'],
    [{ role: 'assistant', content: 'Hi' }, 'Hi'],
    [{ a: 1 }, '{"a":1}'],
    [null, 'null'],
  ])('output %j reads as %j', (value, text) => {
    expect(outputText(value)).toBe(text);
  });
  it('errors read "title: message"', () => {
    expect(toolError('VALIDATION_ERROR', 'bad')).toEqual({ content: [{ type: 'text', text: 'VALIDATION_ERROR: bad' }], isError: true });
    expect(toolError('', '')).toEqual({ content: [{ type: 'text', text: 'Error!' }], isError: true });
  });
});
