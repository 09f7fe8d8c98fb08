import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const submit = vi.fn();
const connect = vi.fn();
vi.mock('@gradio/client', () => ({ Client: { connect: (...args: unknown[]) => connect(...args) } }));

const { codeFromStatus, connectGradio, readOfflineFlag } = await import('../../../../../src/lib/chat/transport.ts');

function fakeSubmission(events: unknown[]) {
  const cancel = vi.fn(async () => {});
  return {
    cancel,
    async *[Symbol.asyncIterator]() {
      for (const e of events) yield e;
    },
  };
}

describe('codeFromStatus', () => {
  const table: [Parameters<typeof codeFromStatus>[0], string][] = [
    [{ broken: true, message: 'Connection errored out.' }, 'GRADIO_UNREACHABLE'],
    [{ title: 'CONVERSATION_BUSY', message: 'busy' }, 'CONVERSATION_BUSY'],
    [{ title: 'Error', message: 'APPROVAL_NOT_FOUND: nothing pending' }, 'APPROVAL_NOT_FOUND'],
    [{ message: 'Not authenticated' }, 'UNAUTHORIZED'],
    [{ message: 'Login credentials are required to access this Space.' }, 'UNAUTHORIZED'],
    [{ message: 'Could not resolve app config.' }, 'GRADIO_UNREACHABLE'],
    // The database is down: /config answers 503, a join 503 (the client shows its "busy" text).
    [{ message: 'Could not resolve app config. (received status 503 when fetching the app config)' }, 'SERVICE_UNAVAILABLE'],
    // nginx in front of a dead gateway: 502.
    [{ message: 'Could not resolve app config. (received status 502 when fetching the app config)' }, 'GRADIO_UNREACHABLE'],
    [{ message: 'This application is currently busy. Please try again. ' }, 'SERVICE_UNAVAILABLE'],
    [{ title: 'SERVICE_UNAVAILABLE', message: 'The service is temporarily unavailable.' }, 'SERVICE_UNAVAILABLE'],
    [{ message: 'boom' }, 'INTERNAL'],
    [{ message: 'NOT_A_CODE happened' }, 'INTERNAL'],
  ];
  for (const [status, code] of table) it(`${JSON.stringify(status)} -> ${code}`, () => expect(codeFromStatus(status).code).toBe(code));
});

describe('connectGradio', () => {
  afterEach(() => vi.clearAllMocks());
  // Unstubbed after this block: the unit project shares globalThis between files (no isolation).
  beforeAll(() => vi.stubGlobal('location', { origin: 'http://airlock.test' }));
  afterAll(() => vi.unstubAllGlobals());

  it('connects to origin + /api/agent/gradio with the bearer header, data+status events, no run history', async () => {
    connect.mockResolvedValue({ config: { root: 'http://airlock.test/api/agent/gradio' }, submit, close: vi.fn() });
    await connectGradio('tok');
    expect(connect).toHaveBeenCalledWith('http://airlock.test/api/agent/gradio', {
      headers: { Authorization: 'Bearer tok' }, events: ['data', 'status'], record_history: false,
    });
  });

  it('submits once per message with the keyword call shape and maps data/status events', async () => {
    const message = { role: 'assistant', content: 'Hi', metadata: { type: 'stream_token', token: 'Hi' } };
    const submission = fakeSubmission([
      { type: 'status', stage: 'pending' },
      { type: 'data', data: [message] },
      { type: 'status', stage: 'complete' },
      { type: 'data', data: [message] },
    ]);
    submit.mockReturnValue(submission);
    connect.mockResolvedValue({ config: {}, submit, close: vi.fn() });
    const transport = await connectGradio('tok');
    const run = transport.submit({ text: 'hello', files: [], conversationId: 'c1', action: null });
    const seen = [];
    for await (const e of run) seen.push(e);
    expect(submit).toHaveBeenCalledWith('/chat', { message: { text: 'hello', files: [] }, conversation_id: 'c1', action: null, approval_id: null });
    expect(seen).toEqual([{ type: 'message', message }]);
    await run.cancel();
    expect(submission.cancel).toHaveBeenCalledOnce();
  });

  it('with a token source, each submit, upload and probe first renews the one header object the client reads', async () => {
    let n = 0;
    const options: { headers?: Record<string, string> } = {};
    const seenAtSubmit: string[] = [];
    submit.mockImplementation(() => {
      seenAtSubmit.push(options.headers!.Authorization!);
      return fakeSubmission([{ type: 'status', stage: 'complete' }]);
    });
    connect.mockImplementation(async (_url: string, o: typeof options) => {
      Object.assign(options, o);
      return { config: {}, submit, close: vi.fn() };
    });
    const transport = await connectGradio(async () => `t${++n}`);
    expect(options.headers!.Authorization).toBe('Bearer t1');
    for await (const _ of transport.submit({ text: 'a', files: [], conversationId: 'c1', action: null }));
    for await (const _ of transport.submit({ text: 'b', files: [], conversationId: 'c1', action: null }));
    expect(seenAtSubmit).toEqual(['Bearer t2', 'Bearer t3']);
  });

  it('a Stop before the submit went out sends nothing', async () => {
    connect.mockResolvedValue({ config: {}, submit, close: vi.fn() });
    const transport = await connectGradio(async () => 'tok');
    const run = transport.submit({ text: 'a', files: [], conversationId: 'c1', action: null });
    await run.cancel();
    const seen = [];
    for await (const e of run) seen.push(e);
    expect(seen).toEqual([]);
    expect(submit).not.toHaveBeenCalled();
  });

  it('an error status ends the run with a taxonomy failure', async () => {
    submit.mockReturnValue(fakeSubmission([{ type: 'status', stage: 'error', broken: true, message: 'Connection errored out.' }]));
    connect.mockResolvedValue({ config: {}, submit, close: vi.fn() });
    const transport = await connectGradio('tok');
    const seen = [];
    for await (const e of transport.submit({ text: 'confirm', files: [], conversationId: 'c1', action: 'confirm', approvalId: 'a1' })) seen.push(e);
    expect(seen).toEqual([{ type: 'failed', code: 'GRADIO_UNREACHABLE', detail: 'Connection errored out.' }]);
    expect(submit.mock.calls[0][1]).toMatchObject({ action: 'confirm', approval_id: 'a1' });
  });

  it('an error ChatMessage then the error completion (issue 13) is one failure: the message, no second failed event', async () => {
    const error = { role: 'assistant', content: '', metadata: { type: 'error', code: 'CONVERSATION_BUSY', detail: 'Busy.', retryable: true } };
    submit.mockReturnValue(fakeSubmission([
      { type: 'data', data: [error] },
      { type: 'status', stage: 'error', title: 'CONVERSATION_BUSY', message: 'CONVERSATION_BUSY: Busy.' },
    ]));
    connect.mockResolvedValue({ config: {}, submit, close: vi.fn() });
    const transport = await connectGradio('tok');
    const seen = [];
    for await (const e of transport.submit({ text: 'hi', files: [], conversationId: 'c1', action: null })) seen.push(e);
    expect(seen).toEqual([{ type: 'message', message: error }]);
  });

  it('a 401 on connect is UNAUTHORIZED; anything else is GRADIO_UNREACHABLE', async () => {
    connect.mockRejectedValueOnce(new Error('Login credentials are required to access this Space.'));
    await expect(connectGradio('bad')).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    connect.mockRejectedValueOnce(new Error('fetch failed'));
    await expect(connectGradio('tok')).rejects.toMatchObject({ code: 'GRADIO_UNREACHABLE' });
  });

  it('uploads through the client and returns FileData refs', async () => {
    const upload_files = vi.fn(async () => ({ files: ['/data/abc/report.txt'] }));
    connect.mockResolvedValue({ config: { root: 'http://airlock.test/api/agent/gradio' }, submit, upload_files, close: vi.fn() });
    const transport = await connectGradio('tok');
    const file = new File(['hello'], 'report.txt', { type: 'text/plain' });
    expect(await transport.upload([file])).toEqual([
      { path: '/data/abc/report.txt', orig_name: 'report.txt', size: 5, mime_type: 'text/plain', meta: { _type: 'gradio.FileData' } },
    ]);
    expect(upload_files).toHaveBeenCalledWith('http://airlock.test/api/agent/gradio', [file]);
  });

  it('reads the offline-model flag from the config', () => {
    expect(readOfflineFlag({ offline_model: true })).toBe(true);
    expect(readOfflineFlag({ airlock: { offline_model: true } })).toBe(true);
    expect(readOfflineFlag({})).toBe(false);
  });
});
