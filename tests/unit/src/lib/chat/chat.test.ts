import { describe, expect, it, vi } from 'vitest';
import { ChatState } from '../../../../../src/lib/chat/chat.svelte.ts';
import { ApiError } from '../../../../../src/lib/chat/errors.ts';
import type { ChatItem, StoredMessage } from '../../../../../src/lib/chat/types.ts';
import { fakeApi, FakeTransport, memoryMarks, settle, wire } from './fakes.ts';

function setup(history: Record<string, StoredMessage[]> = {}, stream: Parameters<typeof fakeApi>[2] = {}) {
  const transport = new FakeTransport();
  const api = fakeApi(history, 50, stream);
  const connection = { require: () => transport, lost: vi.fn() };
  const onUnauthorized = vi.fn();
  const onCreated = vi.fn();
  const phases: string[] = [];
  const chat = new ChatState({
    api, connection, onUnauthorized, onCreated, onPhase: (p) => phases.push(p),
    schedule: (fn) => fn(), stopGraceMs: 50,
  });
  return { chat, transport, api, connection, onUnauthorized, onCreated, phases };
}

const stored = (id: string, role: 'user' | 'assistant', content: string, metadata: Record<string, unknown> = {}): StoredMessage =>
  ({ id, conversation_id: 'c1', role, content, metadata, created_at: '2026-01-01T00:00:00Z', seq: 0, branch: 0 }) as StoredMessage;
const future = () => new Date(Date.now() + 60_000).toISOString();

describe('ChatState', () => {
  it('1. creates the conversation for the first message, 2. submits once with the keyword shape, 3. streams tokens', async () => {
    const { chat, transport, api, onCreated, phases } = setup();
    await chat.open(null);
    expect(await chat.send('What can you do?')).toBe(true);
    await settle();
    expect(api.calls).toEqual(['create:What can you do?']);
    expect(onCreated).toHaveBeenCalledWith(expect.objectContaining({ id: 'c1' }));
    expect(chat.conversationId).toBe('c1');
    expect(transport.runs).toHaveLength(1);
    expect(transport.last.input).toEqual({ text: 'What can you do?', files: [], conversationId: 'c1', action: null });
    expect(chat.busy).toBe(true);

    transport.last.push(wire.token('I can', 'I can'));
    transport.last.push(wire.token('I can help.', ' help.'));
    await settle();
    expect(chat.items.at(-1)).toMatchObject({ kind: 'answer', text: 'I can help.', streaming: true });

    transport.last.end();
    await settle();
    expect(chat.busy).toBe(false);
    expect(chat.items.at(-1)).toMatchObject({ streaming: false });
    expect(chat.announcement).toBe('Answer complete.');
    expect(phases).toEqual(['streaming', 'idle']);
  });

  it('a second Enter while the first message creates the conversation sends nothing', async () => {
    const { chat, transport, api } = setup();
    await chat.open(null);
    const first = chat.send('one');
    expect(await chat.send('one')).toBe(false);
    await first;
    await settle();
    expect(api.calls.filter((c) => c.startsWith('create'))).toHaveLength(1);
    expect(transport.runs).toHaveLength(1);
  });

  it('ignores empty messages; a send while a run streams is queued under it (issue 24), not part of the turn', async () => {
    const { chat, transport, api } = setup();
    await chat.open('c9');
    expect(await chat.send('   ')).toBe(false);
    await chat.send('one');
    expect(await chat.send('two')).toBe(true);
    expect(await chat.send('three')).toBe(true);
    expect(transport.runs.map((r) => r.input)).toEqual([
      { text: 'one', files: [], conversationId: 'c9', action: null },
      { text: 'two', files: [], conversationId: 'c9', action: null },
      { text: 'three', files: [], conversationId: 'c9', action: null },
    ]);
    expect(chat.items.filter((i) => i.kind === 'user')).toHaveLength(1);
    expect(chat.queued.items.map((q) => q.text)).toEqual(['two', 'three']);
    transport.runs[1].push({ role: 'assistant', content: '', metadata: { type: 'queued', position: 1, request_id: 'r2', conversation_id: 'c9' } } as never);
    transport.runs[2].push({ role: 'assistant', content: '', metadata: { type: 'queued', position: 2, request_id: 'r3', conversation_id: 'c9' } } as never);
    await settle();
    expect(chat.queued.items.map((q) => [q.requestId, q.position])).toEqual([['r2', 1], ['r3', 2]]);
    // "Remove queued message": the gateway drops it; its call then ends (CONFLICT), and no error shows.
    await chat.queued.remove('c9', chat.queued.items[0].key);
    expect(api.calls).toContain('unqueue:c9:r2');
    transport.runs[1].fail('CONFLICT', 'removed');
    await settle();
    expect(chat.queued.items.map((q) => q.text)).toEqual(['three']);
    expect(chat.notice).toBeNull();
    // The running turn ends; the queued one's turn starts: it leaves the list, the tab follows it.
    transport.runs[0].end();
    await settle();
    const loads = () => api.calls.filter((c) => c === 'history:c9:').length;
    const before = loads();
    transport.runs[2].push(wire.token('ok', 'ok'));
    await settle();
    expect(chat.queued.items).toEqual([]);
    expect(loads()).toBe(before + 1);
    expect(chat.busy).toBe(false);
  });

  it('a queued message the gateway refuses (the queue is full) says so, and nothing else changes', async () => {
    const { chat, transport } = setup();
    await chat.open('c9');
    await chat.send('one');
    await chat.send('two');
    transport.runs[1].fail('CONVERSATION_BUSY', 'full');
    await settle();
    expect(chat.queued.items).toEqual([]);
    expect(chat.notice).toMatch(/not queued/);
    expect(chat.busy).toBe(true);
  });

  it('HITL: confirm is a second submit with action "confirm", then the resumed answer streams', async () => {
    const { chat, transport, phases } = setup();
    await chat.open('c1');
    await chat.send('Deploy checkout-api 2.4.1 to staging');
    transport.last.push(wire.toolStart('t1', 'list_deployments', {}));
    transport.last.push(wire.toolEnd('t1', 'list_deployments', []));
    transport.last.push(wire.confirm('ap-1', 'deploy_service', { service: 'checkout-api', version: '2.4.1', environment: 'staging' }, future()));
    transport.last.end();
    await settle();
    expect(chat.phase).toBe('awaiting_confirmation');
    expect(chat.pendingApproval).toMatchObject({ id: 'ap-1', tool: 'deploy_service' });

    chat.confirm('ap-1');
    chat.confirm('ap-1'); // a double click sends once
    await settle();
    expect(transport.runs).toHaveLength(2);
    expect(transport.last.input).toEqual({ text: 'confirm', files: [], conversationId: 'c1', action: 'confirm', approvalId: 'ap-1' });
    expect(chat.items.find((i) => i.id === 'ap-1')).toMatchObject({ deciding: 'confirm' });

    transport.last.push(wire.resolved('ap-1', 'confirmed'));
    transport.last.push(wire.toolStart('t2', 'deploy_service', {}));
    transport.last.push(wire.toolEnd('t2', 'deploy_service', { status: 'succeeded' }));
    transport.last.push(wire.token('Deployed 2.4.1.', 'Deployed 2.4.1.'));
    transport.last.end();
    await settle();
    expect(chat.items.map((i) => i.kind)).toEqual(['user', 'tool', 'approval', 'tool', 'answer']);
    expect(chat.items[2]).toMatchObject({ status: 'confirmed' });
    expect(chat.phase).toBe('idle');
    expect(phases).toEqual(['streaming', 'awaiting_confirmation', 'streaming', 'idle']);
  });

  it('HITL: two cards, each decided for itself; the run waits until both are answered', async () => {
    const { chat, transport } = setup();
    await chat.open('c1');
    await chat.send('Deploy checkout-api 2.4.1 and payments-api 1.0.0 to staging');
    transport.last.push(wire.confirm('ap-a', 'deploy_service', { service: 'checkout-api' }, future()));
    transport.last.push(wire.confirm('ap-b', 'deploy_service', { service: 'payments-api' }, future()));
    transport.last.end();
    await settle();
    chat.confirm('ap-a');
    await settle();
    expect(transport.last.input).toMatchObject({ action: 'confirm', approvalId: 'ap-a' });
    transport.last.push(wire.resolved('ap-a', 'confirmed'));
    transport.last.end(); // the gateway resolves only ap-a and keeps the run paused
    await settle();
    expect(chat.items.filter((i) => i.kind === 'approval').map((i) => i.kind === 'approval' && i.status)).toEqual(['confirmed', 'pending']);
    expect(chat.phase).toBe('awaiting_confirmation');
    chat.deny('ap-b');
    await settle();
    expect(transport.last.input).toMatchObject({ action: 'deny', approvalId: 'ap-b' });
  });

  it('HITL: deny sends action "deny" and the card collapses to denied', async () => {
    const { chat, transport } = setup();
    await chat.open('c1');
    await chat.send('Start maintenance on db-primary');
    transport.last.push(wire.confirm('ap-2', 'start_maintenance', { service: 'db-primary' }, future()));
    transport.last.end();
    await settle();
    chat.deny('ap-2');
    await settle();
    expect(transport.last.input.action).toBe('deny');
    transport.last.push(wire.resolved('ap-2', 'denied'));
    transport.last.push(wire.token('Understood, nothing was started.', 'x'));
    transport.last.end();
    await settle();
    expect(chat.items.find((i) => i.kind === 'approval')).toMatchObject({ status: 'denied' });
  });

  it('a pending approval from history can still be confirmed after a reload', async () => {
    const { chat, transport } = setup({
      c1: [
        stored('m1', 'user', 'Deploy checkout-api 2.4.1 to staging'),
        stored('m2', 'assistant', '', { type: 'approval', approval_id: 'ap-9', tool: 'deploy_service', input: { service: 'checkout-api' }, prompt: 'Deploy?', expires_at: future(), timeout_s: 300, status: 'pending' }),
      ],
    });
    await chat.open('c1');
    expect(chat.phase).toBe('awaiting_confirmation');
    // A pause seen in history is not this tab's: the tab gate must not announce it as held here.
    expect(chat.ownsPhase).toBe(false);
    chat.confirm('ap-9');
    expect(chat.ownsPhase).toBe(true);
    await settle();
    expect(transport.last.input).toMatchObject({ conversationId: 'c1', action: 'confirm' });
  });

  it('Stop cancels the submission and keeps the partial answer marked stopped', async () => {
    const { chat, transport } = setup();
    await chat.open('c1');
    await chat.send('Tell me a long story');
    transport.last.push(wire.token('Once upon', 'Once upon'));
    await settle();
    await chat.stop();
    await settle();
    expect(transport.last.cancelled).toBe(true);
    expect(chat.busy).toBe(false);
    expect(chat.items.at(-1)).toMatchObject({ kind: 'answer', text: 'Once upon', cancelled: true, streaming: false });
  });

  it('Stop gives up on a gateway that never ends the event', async () => {
    const { chat, transport } = setup();
    await chat.open('c1');
    await chat.send('x');
    transport.last.endOnCancel = false;
    transport.last.push(wire.token('partial', 'partial'));
    await settle();
    await chat.stop();
    await new Promise((r) => setTimeout(r, 80));
    expect(chat.busy).toBe(false);
    transport.last.push(wire.token('partial and late', ' and late'));
    await settle();
    expect(chat.items.at(-1)).toMatchObject({ text: 'partial', cancelled: true });
  });

  it('a retryable error card retries the same submit without a second user bubble', async () => {
    const { chat, transport } = setup();
    await chat.open('c1');
    await chat.send('health of payments-api');
    transport.last.push(wire.error('LLM_UNAVAILABLE', 'model timeout', true));
    transport.last.end();
    await settle();
    const error = chat.items.find((i) => i.kind === 'error')!;
    expect(error).toMatchObject({ code: 'LLM_UNAVAILABLE', retryable: true });
    chat.retry(error.id);
    await settle();
    expect(transport.runs).toHaveLength(2);
    expect(transport.last.input).toEqual(transport.runs[0].input);
    expect(chat.items.filter((i) => i.kind === 'user')).toHaveLength(1);
    expect(chat.items.some((i) => i.kind === 'error')).toBe(false);
  });

  it('Retry on an error card from history asks again with the message that led to it', async () => {
    const { chat, transport } = setup({
      c1: [stored('m1', 'user', 'health of payments-api'), stored('m2', 'assistant', '', { type: 'answer', error: { code: 'LLM_UNAVAILABLE', detail: 'timeout' } })],
    });
    await chat.open('c1');
    chat.retry('m2-error');
    await settle();
    expect(transport.last.input).toEqual({ text: 'health of payments-api', files: [], conversationId: 'c1', action: null });
    expect(chat.items.some((i) => i.kind === 'error')).toBe(false);
  });

  it('a broken stream reports GRADIO_UNREACHABLE to the connection', async () => {
    const { chat, transport, connection } = setup();
    await chat.open('c1');
    await chat.send('x');
    transport.last.fail('GRADIO_UNREACHABLE', 'Connection errored out.');
    await settle();
    expect(connection.lost).toHaveBeenCalled();
    expect(chat.items.at(-1)).toMatchObject({ kind: 'error', code: 'GRADIO_UNREACHABLE' });
    expect(chat.busy).toBe(false);
  });

  it('SERVICE_UNAVAILABLE (database down mid-run) keeps the session and tells the connection', async () => {
    const { chat, transport, connection, onUnauthorized } = setup();
    await chat.open('c1');
    await chat.send('x');
    transport.last.fail('SERVICE_UNAVAILABLE', 'The service is temporarily unavailable.');
    await settle();
    expect(connection.lost).toHaveBeenCalledWith('unavailable');
    expect(onUnauthorized).not.toHaveBeenCalled();
    expect(chat.items.at(-1)).toMatchObject({ kind: 'error', code: 'SERVICE_UNAVAILABLE' });
  });

  it('an in-stream SERVICE_UNAVAILABLE error message marks the connection, never signs out', async () => {
    const { chat, transport, connection, onUnauthorized } = setup();
    await chat.open('c1');
    await chat.send('x');
    transport.last.push(wire.error('SERVICE_UNAVAILABLE', 'The service is temporarily unavailable.', true));
    transport.last.end();
    await settle();
    expect(connection.lost).toHaveBeenCalledWith('unavailable');
    expect(onUnauthorized).not.toHaveBeenCalled();
  });

  it('no connection: the message fails with GRADIO_UNREACHABLE instead of hanging', async () => {
    const { chat, connection } = setup();
    connection.require = () => {
      throw new ApiError('GRADIO_UNREACHABLE', 'not connected');
    };
    await chat.open('c1');
    await chat.send('x');
    await settle();
    expect(chat.items.map((i) => i.kind)).toEqual(['user', 'error']);
    expect(chat.busy).toBe(false);
  });

  it('UNAUTHORIZED in the stream sends the user to login', async () => {
    const { chat, transport, onUnauthorized } = setup();
    await chat.open('c1');
    await chat.send('x');
    transport.last.push(wire.error('UNAUTHORIZED', 'token expired'));
    transport.last.end();
    await settle();
    expect(onUnauthorized).toHaveBeenCalled();
  });

  it('loads history on open and older pages on demand, oldest first', async () => {
    const messages = Array.from({ length: 120 }, (_, i) => stored(`m${i}`, i % 2 ? 'assistant' : 'user', `message ${i}`, i % 2 ? { type: 'answer' } : {}));
    const { chat } = setup({ c1: messages });
    await chat.open('c1');
    expect(chat.items).toHaveLength(50);
    expect(chat.items[0]).toMatchObject({ id: 'm70' });
    expect(chat.hasOlder).toBe(true);
    await chat.loadOlder();
    expect(chat.items[0]).toMatchObject({ id: 'm20' });
    await chat.loadOlder();
    expect(chat.items).toHaveLength(120);
    expect(chat.items.map((i) => i.id)).toEqual(messages.map((m) => m.id));
    expect(chat.hasOlder).toBe(false);
  });

  it('older pages are read from the branch shown, though another tab may switch the conversation meanwhile (issue 29)', async () => {
    const messages = Array.from({ length: 60 }, (_, i) => ({ ...stored(`m${i}`, i % 2 ? 'assistant' : 'user', `message ${i}`, i % 2 ? { type: 'answer' } : {}), seq: i + 1, branch: i < 40 ? 0 : 1 }));
    const { chat, api } = setup({ c1: messages }, { branches: { active: 1, forks: [{ branch: 1, parent: 0, from: 41 }] } });
    await chat.open('c1');
    await chat.loadOlder();
    expect(api.calls).toEqual(['history:c1:', 'history:c1:m10@1']);
    expect(chat.items).toHaveLength(60);
  });

  it('a live message learns its stored id when its run ends (issue 29: Edit needs it); nothing on screen is rebuilt', async () => {
    const history: Record<string, StoredMessage[]> = { c1: [] };
    const { chat, transport } = setup(history);
    await chat.open('c1');
    await chat.send('hello');
    transport.last.push(wire.token('Hi', 'Hi'));
    history.c1.push({ ...stored('m1', 'user', 'hello'), seq: 1 }, { ...stored('m2', 'assistant', 'Hi', { type: 'answer' }), seq: 2 });
    transport.last.end();
    await settle();
    await settle();
    expect(chat.items.map((i) => [i.id.startsWith('m'), i.messageId, i.seq])).toEqual([[false, 'm1', 1], [false, 'm2', 2]]);
  });

  it('Edit sends action edit with the message id and its files, shows the new text at once, then loads the new branch', async () => {
    const file = { path: '/tmp/gradio/app.log', orig_name: 'app.log', size: 3 };
    const { chat, transport, api } = setup({ c1: [{ ...stored('m1', 'user', 'hello', { files: [file] }), seq: 1 }, { ...stored('m2', 'assistant', 'Hi', { type: 'answer' }), seq: 2 }] });
    await chat.open('c1');
    chat.fork('m1', 'edit', 'hello again');
    await settle();
    expect(transport.last.input).toMatchObject({ action: 'edit', messageId: 'm1', text: 'hello again', files: [file] });
    expect(chat.items.map((i) => (i.kind === 'user' ? i.text : i.kind))).toEqual(['hello again']);
    const loads = api.calls.filter((c) => c === 'history:c1:').length;
    transport.last.end();
    await settle();
    expect(api.calls.filter((c) => c === 'history:c1:').length).toBe(loads + 1);
  });

  it('Regenerate keeps the message it answers; the switch posts the branch and reloads', async () => {
    const { chat, transport, api } = setup({ c1: [{ ...stored('m1', 'user', 'hello'), seq: 1 }, { ...stored('m2', 'assistant', 'Hi', { type: 'answer' }), seq: 2 }] });
    await chat.open('c1');
    chat.fork('m2', 'regenerate');
    expect(transport.last.input).toMatchObject({ action: 'regenerate', messageId: 'm2', text: '' });
    expect(chat.items.map((i) => i.id)).toEqual(['m1']);
    transport.last.end();
    await settle();
    await chat.switchBranch(0);
    expect(api.calls.indexOf('branch:c1:0')).toBeGreaterThan(-1);
    expect(api.calls.lastIndexOf('history:c1:')).toBeGreaterThan(api.calls.indexOf('branch:c1:0'));
  });

  it('switching conversations abandons the old run', async () => {
    const { chat, transport } = setup({ c2: [stored('x', 'user', 'other')] });
    await chat.open('c1');
    await chat.send('x');
    await chat.open('c2');
    transport.runs[0].push(wire.token('late', 'late'));
    await settle();
    expect(chat.items).toEqual([{ kind: 'user', id: 'x', messageId: 'x', seq: 0, text: 'other', files: [] }]);
  });
});

/** A stream reopened after seq 1: the snapshot "Hello wor", one more token, then the commit and the end. */
const HELLO_WORLD_AFTER_SEQ_1 = [
  { event: 'partial_snapshot', data: { token: 'Hello wor' } }, // the answer so far, as the server sends it on attaching (partials=1&snapshot=1)
  { event: 'partial', data: { token: 'ld' } },
  { id: 2, event: 'assistant.message', data: { text: 'Hello world' } },
  { id: 3, event: 'run.finished', data: { status: 'done' } },
];

describe('ChatState after a reload (a run the ledger shows still open)', () => {
  function resumed(marked: string[], stream: Parameters<typeof fakeApi>[2], messages = [stored('m1', 'user', 'hi'), stored('m2', 'assistant', 'Hel', { type: 'answer' })]) {
    const transport = new FakeTransport();
    const history: Record<string, StoredMessage[]> = { c1: messages };
    const api = fakeApi(history, 50, stream);
    const connection = { require: () => transport, lost: vi.fn() };
    let atEnd: ChatItem[] = [];
    const chat: ChatState = new ChatState({
      api, connection, schedule: (fn) => fn(), marks: memoryMarks(marked),
      // What the followed stream alone built, before the stored page replaces it.
      onPhase: (phase) => void (phase === 'idle' && (atEnd = chat.items)),
    });
    return { chat, api, transport, history, connection, stream, atEnd: () => atEnd };
  }
  const histories = (api: { calls: string[] }) => api.calls.filter((c) => c.startsWith('history:')).length;

  it('its own run goes on live, with Stop, continuing the flushed answer in place; it ends on the stored page', async () => {
    const { chat, api, transport, history, stream, atEnd } = resumed(['c1'], { ledgerSeq: 1, last: 'user.message', frames: HELLO_WORLD_AFTER_SEQ_1 });
    await chat.open('c1');
    // The step that shows the stored part shows it as still being written: never as final.
    expect(chat.items.at(-1)).toMatchObject({ id: 'm2', text: 'Hel', streaming: true });
    expect(chat.busy).toBe(true);
    expect(chat.ownsPhase).toBe(true);
    expect(chat.followingOther).toBe(false);
    history.c1 = [stored('m1', 'user', 'hi'), stored('m2', 'assistant', 'Hello world', { type: 'answer' })];
    stream!.last = 'run.finished';
    await vi.waitFor(() => expect(histories(api)).toBe(2));
    expect(api.calls).toContain('events:c1:1');
    expect(atEnd().filter((i) => i.kind === 'answer')).toEqual([expect.objectContaining({ id: 'm2', text: 'Hello world', streaming: false })]);
    expect(chat.items.filter((i) => i.kind === 'answer')).toEqual([expect.objectContaining({ text: 'Hello world', streaming: false })]);
    expect(chat.busy).toBe(false);
    expect(transport.runs).toHaveLength(0); // nothing was submitted again
  });

  it('a run this tab did not start is followed read-only', async () => {
    const { chat, stream } = resumed([], { ledgerSeq: 1, last: 'user.message', frames: HELLO_WORLD_AFTER_SEQ_1 });
    await chat.open('c1');
    expect(chat.followingOther).toBe(true);
    expect(chat.ownsPhase).toBe(false);
    stream!.last = 'run.finished';
    await vi.waitFor(() => expect(chat.followingOther).toBe(false));
  });

  it('an answer already committed before the run went on is not continued: the new text gets its own bubble', async () => {
    const { chat, stream, atEnd } = resumed(['c1'], {
      ledgerSeq: 2, last: 'assistant.message',
      frames: [{ event: 'partial', data: { token: 'More.' } }, { id: 3, event: 'assistant.message', data: { text: 'More.' } }, { id: 4, event: 'run.finished', data: { status: 'done' } }],
    }, [stored('m1', 'user', 'hi'), stored('m2', 'assistant', 'Done.', { type: 'answer' })]);
    await chat.open('c1');
    expect(chat.items.at(-1)).toMatchObject({ id: 'm2', streaming: false });
    stream!.last = 'run.finished';
    await vi.waitFor(() => expect(atEnd().length).toBeGreaterThan(0));
    expect(atEnd().filter((i) => i.kind === 'answer').map((i) => (i.kind === 'answer' ? i.text : ''))).toEqual(['Done.', 'More.']);
  });

  it('a run already finished: the history is the truth, nothing is followed and the mark goes', async () => {
    let clock = 0;
    const marks = memoryMarks(['c1'], () => clock);
    clock = 60_000; // submitted a minute ago
    const api = fakeApi({ c1: [stored('m1', 'user', 'hi'), stored('m2', 'assistant', 'Hello', { type: 'answer' })] }, 50, { ledgerSeq: 3 });
    const chat = new ChatState({ api, connection: { require: () => new FakeTransport(), lost: vi.fn() }, schedule: (fn) => fn(), marks });
    await chat.open('c1');
    expect(chat.busy).toBe(false);
    expect(chat.items.at(-1)).toMatchObject({ text: 'Hello', streaming: false });
    expect(api.calls.some((c) => c.startsWith('events:'))).toBe(false);
    expect(marks.age('c1')).toBeNull();
  });

  it('a reload that raced its own submit (not in the ledger yet) looks again, then follows it', async () => {
    vi.useFakeTimers();
    try {
      const { chat, api, stream } = resumed(['c1'], { ledgerSeq: 1, frames: [] }, [stored('m0', 'user', 'earlier')]);
      await chat.open('c1');
      expect(chat.busy).toBe(false);
      stream!.last = 'user.message';
      await vi.advanceTimersByTimeAsync(1_000);
      expect(histories(api)).toBe(2);
      expect(chat.busy).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('Stop on its own followed run asks the gateway to cancel it; a gateway that cannot says so', async () => {
    const { chat, api, stream } = resumed(['c1'], { ledgerSeq: 1, last: 'user.message', connections: [[{ event: 'partial', data: { token: 'Hello' } }]] });
    stream!.cancel = async () => {
      throw new ApiError('NOT_FOUND', 'no route');
    };
    await chat.open('c1');
    await chat.stop();
    expect(api.calls).toContain('cancel:c1');
    expect(chat.notice).toMatch(/cannot be stopped/);
  });

  it('a stream that breaks shows nothing as final and tells the connection; resync() loads the ledger again', async () => {
    const { chat, history, stream, connection } = resumed(['c1'], { ledgerSeq: 1, last: 'user.message', connections: [[{ event: 'partial', data: { token: 'Hello' } }]] });
    await chat.open('c1');
    await vi.waitFor(() => expect(connection.lost).toHaveBeenCalled());
    expect(chat.items.at(-1)).toMatchObject({ text: 'Hello', streaming: true });
    history.c1 = [stored('m1', 'user', 'hi'), stored('m2', 'assistant', 'Hello world', { type: 'answer' })];
    stream!.last = 'run.finished';
    await chat.resync();
    expect(chat.items.at(-1)).toMatchObject({ text: 'Hello world', streaming: false });
    expect(chat.busy).toBe(false);
  });
});

describe('ChatState following a run across a drain (the server restarts, or a replica stops)', () => {
  it('reopens the stream after the last seq and continues the answer: the snapshot adds only what is new', async () => {
    let atEnd: ChatItem[] = [];
    const stream: Parameters<typeof fakeApi>[2] = {
      ledgerSeq: 1,
      last: 'user.message',
      connections: [
        [
          { event: 'partial', data: { token: 'Hel' } },
          { event: 'partial', data: { token: 'lo' } },
          { event: 'drain', data: { retry_after_ms: 0 } },
        ],
        HELLO_WORLD_AFTER_SEQ_1,
      ],
    };
    const api = fakeApi({ c1: [stored('m1', 'user', 'hi')] }, 50, stream);
    const chat: ChatState = new ChatState({
      api, connection: { require: () => new FakeTransport(), lost: vi.fn() }, schedule: (fn) => fn(), marks: memoryMarks(['c1']),
      onPhase: (phase) => void (phase === 'idle' && (atEnd = chat.items)),
    });
    await chat.open('c1');
    stream!.last = 'run.finished';
    await vi.waitFor(() => expect(atEnd.length).toBeGreaterThan(0));
    expect(api.calls.filter((c) => c.startsWith('events:'))).toEqual(['events:c1:1', 'events:c1:1']);
    expect(atEnd.filter((i) => i.kind === 'answer')).toEqual([expect.objectContaining({ text: 'Hello world', streaming: false })]);
  });

  it('a drain with no process to answer after it ends the follow and tells the connection (its return resyncs)', async () => {
    const lost = vi.fn();
    const api = fakeApi({ c1: [stored('m1', 'user', 'hi')] }, 50, { ledgerSeq: 1, last: 'user.message', connections: [[{ event: 'drain', data: { retry_after_ms: 0 } }]] });
    const chat = new ChatState({ api, connection: { require: () => new FakeTransport(), lost }, schedule: (fn) => fn(), marks: memoryMarks(['c1']) });
    await chat.open('c1');
    await vi.waitFor(() => expect(lost).toHaveBeenCalled());
    // The reopened stream had nothing (the fake ends it at once): bounded, never a loop.
    expect(api.calls.filter((c) => c.startsWith('events:')).length).toBe(2);
  });
});

describe('ChatState.watchPause (a pause decided elsewhere)', () => {
  const card = (status: string) =>
    stored('m2', 'assistant', '', { type: 'approval', approval_id: 'ap-1', tool: 'deploy_service', input: { service: 'checkout-api' }, prompt: 'Deploy?', expires_at: future(), timeout_s: 300, status });
  const frames = [
    { id: 4, event: 'approval.resolved', data: { approval_id: 'ap-1', result: 'confirmed' } },
    { id: 5, event: 'tool.call', data: { tool: 'deploy_service', input: { service: 'checkout-api' }, tool_call_id: 't1' } },
    { id: 6, event: 'tool.result', data: { tool: 'deploy_service', status: 'done', output: { ok: true }, tool_call_id: 't1', duration_ms: 3 } },
    { event: 'partial', data: { token: 'Deployed.' } },
    { id: 7, event: 'assistant.message', data: { text: 'Deployed.' } },
    { id: 8, event: 'run.finished', data: { status: 'done' } },
  ];

  it('resolves the card shown here and streams the resumed answer, without reloading the view or submitting', async () => {
    const transport = new FakeTransport();
    const api = fakeApi({ c1: [stored('m1', 'user', 'deploy'), card('pending')] }, 50, { ledgerSeq: 3, frames });
    const chat = new ChatState({ api, connection: { require: () => transport, lost: vi.fn() }, schedule: (fn) => fn() });
    await chat.open('c1');
    expect(chat.pendingApproval).toMatchObject({ id: 'ap-1' });
    await chat.watchPause(new AbortController().signal);
    expect(api.calls).toContain('events:c1:3');
    expect(chat.items.find((i) => i.kind === 'approval')).toMatchObject({ status: 'confirmed' });
    expect(chat.items.filter((i) => i.kind === 'answer')).toEqual([expect.objectContaining({ text: 'Deployed.', streaming: false })]);
    expect(chat.items.find((i) => i.kind === 'tool')).toMatchObject({ status: 'done' });
    expect(chat.busy).toBe(false);
    expect(transport.runs).toHaveLength(0);
  });

  it('applies nothing of the stream once this tab decides itself (its own run carries the events)', async () => {
    const transport = new FakeTransport();
    const api = fakeApi({ c1: [stored('m1', 'user', 'deploy'), card('pending')] }, 50, { ledgerSeq: 3, frames });
    const chat = new ChatState({ api, connection: { require: () => transport, lost: vi.fn() }, schedule: (fn) => fn() });
    await chat.open('c1');
    const watching = chat.watchPause(new AbortController().signal);
    chat.confirm('ap-1');
    await watching;
    expect(transport.runs).toHaveLength(1);
    // The card is only "deciding" (this tab's run has not answered yet): the stream's copy was not applied.
    expect(chat.items.find((i) => i.kind === 'approval')).toMatchObject({ status: 'pending' });
    expect(chat.items.filter((i) => i.kind === 'answer')).toHaveLength(0);
  });
});
