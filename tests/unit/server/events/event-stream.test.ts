import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EventDraft, LedgerEvent } from '../../../../server/engine/index.ts';
import { MemoryLedger } from '../../../../server/engine/memory-ledger.ts';
import { TurnHub } from '../../../../server/engine/turn-hub.ts';
import { EventStream } from '../../../../server/events/event-stream.ts';

const tick = () => new Promise((r) => setTimeout(r, 10));

function setup(after = 0, snapshot = true) {
  const ledger = new MemoryLedger();
  const conversation = randomUUID();
  const run = randomUUID();
  const hub = new TurnHub(run, conversation);
  let live: TurnHub | undefined = hub;
  const out: string[] = [];
  const gone = new AbortController();
  const stream = new EventStream({ ledger, conversationId: conversation, after, partials: true, snapshot, liveRun: () => live, heartbeatMs: 60_000, write: (c) => out.push(c), signal: gone.signal });
  /** Commits like the engine: to the ledger, then to the run's live followers. */
  const commit = async (...drafts: EventDraft[]) => (await ledger.append(conversation, drafts)).forEach((e: LedgerEvent) => hub.publish(e));
  const partial = (token: string) => hub.publish({ kind: 'partial', payload: { run_id: run, token } });
  return { ledger, conversation, run, hub, stream, out, gone, commit, partial, endRun: () => (live = undefined) };
}

const frames = (out: string[]) => out.join('').split('\n\n').filter(Boolean);

describe('EventStream', () => {
  it('committed events with ids, the answer so far as ONE partial_snapshot, then tokens; each event once; drain last', async () => {
    const s = setup();
    await s.commit({ kind: 'user.message', payload: { run_id: s.run, request_id: 'r', text: 'hi', files: [] } });
    s.partial('Hel');
    s.partial('lo');
    const running = s.stream.run();
    await tick();
    s.partial(' you');
    await tick();
    await s.commit(
      { kind: 'assistant.message', payload: { run_id: s.run, text: 'Hello you' } },
      { kind: 'run.finished', payload: { run_id: s.run, status: 'done', turns: 1, duration_ms: 1, stop_reason: 'end_turn', error_code: null } },
    );
    s.endRun();
    await tick();
    s.stream.drain(1000);
    await running;
    expect(frames(s.out)).toEqual([
      'id: 1\nevent: user.message\ndata: {"run_id":"' + s.run + '","request_id":"r","text":"hi","files":[]}',
      'event: partial_snapshot\ndata: {"run_id":"' + s.run + '","token":"Hello"}',
      'event: partial\ndata: {"run_id":"' + s.run + '","token":" you"}',
      'id: 2\nevent: assistant.message\ndata: {"run_id":"' + s.run + '","text":"Hello you"}',
      expect.stringMatching(/^id: 3\nevent: run.finished\n/),
      'event: drain\ndata: {"retry_after_ms":1000}',
    ]);
  });

  it('without snapshot: what streamed before it attached is not sent, the tokens after it are', async () => {
    const s = setup(0, false);
    await s.commit({ kind: 'user.message', payload: { run_id: s.run, request_id: 'r', text: 'hi', files: [] } });
    s.partial('Hel');
    s.partial('lo');
    const running = s.stream.run();
    await tick();
    s.partial(' you');
    await tick();
    await s.commit({ kind: 'assistant.message', payload: { run_id: s.run, text: 'Hello you' } });
    s.endRun();
    s.stream.drain(1000);
    await running;
    expect(frames(s.out).slice(0, 3)).toEqual([
      expect.stringMatching(/^id: 1\nevent: user.message\n/),
      'event: partial\ndata: {"run_id":"' + s.run + '","token":" you"}',
      'id: 2\nevent: assistant.message\ndata: {"run_id":"' + s.run + '","text":"Hello you"}',
    ]);
  });

  it('resumes after its cursor: nothing at or before it is sent again', async () => {
    const s = setup(1);
    await s.commit({ kind: 'user.message', payload: { run_id: s.run, request_id: 'r', text: 'hi', files: [] } });
    await s.commit({ kind: 'assistant.message', payload: { run_id: s.run, text: 'A' } });
    s.endRun();
    const running = s.stream.run();
    await tick();
    s.stream.drain(5);
    await running;
    expect(frames(s.out).map((f) => f.split('\n')[0])).toEqual(['id: 2', 'event: drain']);
  });

  it('a client that goes away ends the stream and its subscriptions', async () => {
    const s = setup();
    const running = s.stream.run();
    await tick();
    s.gone.abort();
    await running;
    s.partial('late');
    await s.commit({ kind: 'assistant.message', payload: { run_id: s.run, text: 'late' } });
    await tick();
    expect(s.out.join('')).not.toContain('late');
  });
});
