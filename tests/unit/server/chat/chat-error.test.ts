import { describe, expect, it, vi } from 'vitest';
import { guardChatErrors } from '../../../../server/chat/chat-error.ts';
import { toTurnError } from '../../../../server/engine/index.ts';
import { AirlockError } from '../../../../server/errors.ts';
import { EndpointError, type EndpointRequest } from '../../../../server/gradio/index.ts';

const down = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const log = () => ({ warn: vi.fn(), error: vi.fn() }) as any;
const request = (signal = new AbortController().signal) => ({ eventId: 'ev1', signal }) as unknown as EndpointRequest<unknown>;

describe('toTurnError (the taxonomy every transport reports a failed turn in)', () => {
  it('maps an outage to SERVICE_UNAVAILABLE, a bug to INTERNAL with a reference, and keeps expected errors', () => {
    expect(toTurnError(down(), 'ev1')).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryable: true });
    expect(toTurnError(new TypeError('oops'), 'ev1')).toMatchObject({ code: 'INTERNAL', message: expect.stringContaining('ev1') });
    const busy = new AirlockError('CONVERSATION_BUSY');
    expect(toTurnError(busy, 'ev1')).toBe(busy);
  });
});

describe('guardChatErrors', () => {
  it('passes yields through', async () => {
    const guarded = guardChatErrors(async function* () {
      yield [1];
      yield [2];
    }, log());
    const out: unknown[] = [];
    for await (const v of guarded(request()) as AsyncIterable<unknown[]>) out.push(v);
    expect(out).toEqual([[1], [2]]);
  });

  it('a failure before the stream (database down) ends as an error titled SERVICE_UNAVAILABLE, no raw message', async () => {
    const logger = log();
    const guarded = guardChatErrors(async function* () {
      throw down();
    }, logger);
    const error = await (async () => {
      for await (const _ of guarded(request()) as AsyncIterable<unknown[]>) void _;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EndpointError);
    expect(error).toMatchObject({ title: 'SERVICE_UNAVAILABLE', expose: true });
    expect((error as Error).message).not.toMatch(/ECONNREFUSED|5432/);
    expect(logger.warn).toHaveBeenCalled();
  });

  it('an error ChatMessage streams, then the event ends as an error titled with its code (issue 13)', async () => {
    const error = { role: 'assistant', content: '', metadata: { type: 'error', code: 'CONVERSATION_BUSY', detail: 'Busy.', retryable: true } };
    const guarded = guardChatErrors(async function* () {
      yield [error];
    }, log());
    const out: unknown[] = [];
    const thrown = await (async () => {
      for await (const v of guarded(request()) as AsyncIterable<unknown[]>) out.push(v);
    })().catch((e: unknown) => e);
    expect(out).toEqual([[error]]);
    expect(thrown).toBeInstanceOf(EndpointError);
    expect(thrown).toMatchObject({ title: 'CONVERSATION_BUSY', message: 'CONVERSATION_BUSY: Busy.', status: 409 });
  });

  it("a step's error (a refused tool, naming its tool_call_id) does not fail the turn: it completes with the explanation (issue 24 item 2)", async () => {
    const refused = { role: 'assistant', content: '', metadata: { type: 'error', code: 'FORBIDDEN', detail: 'No.', retryable: false, tool_call_id: 't1' } };
    const explained = { role: 'assistant', content: 'You may not deploy.', metadata: { type: 'stream_token', token: 'You may not deploy.' } };
    const guarded = guardChatErrors(async function* () {
      yield [refused];
      yield [explained];
    }, log());
    const out: unknown[] = [];
    for await (const v of guarded(request()) as AsyncIterable<unknown[]>) out.push(v);
    expect(out).toEqual([[refused], [explained]]);
  });

  it('a cancelled run rethrows as is (the server already ended the event)', async () => {
    const controller = new AbortController();
    controller.abort();
    const cause = new Error('aborted');
    const guarded = guardChatErrors(async function* () {
      throw cause;
    }, log());
    const error = await (async () => {
      for await (const _ of guarded(request(controller.signal)) as AsyncIterable<unknown[]>) void _;
    })().catch((e: unknown) => e);
    expect(error).toBe(cause);
  });
});
