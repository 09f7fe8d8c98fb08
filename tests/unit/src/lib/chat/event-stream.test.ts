import { describe, expect, it } from 'vitest';
import { EventsToWire, readSse, type SseFrame } from '../../../../../src/lib/chat/event-stream.ts';

async function* bytes(text: string) {
  for (const b of new TextEncoder().encode(text)) yield new Uint8Array([b]); // one byte per chunk
}

describe('readSse', () => {
  it('parses frames fed one byte at a time; comments and heartbeats are skipped', async () => {
    const raw = ': open\n\nid: 3\nevent: tool.call\ndata: {"tool":"x"}\n\n: heartbeat\n\nevent: partial\ndata: {"token":"hé"}\n\n';
    const frames: SseFrame[] = [];
    for await (const f of readSse(bytes(raw))) frames.push(f);
    expect(frames).toEqual([
      { id: 3, event: 'tool.call', data: { tool: 'x' } },
      { event: 'partial', data: { token: 'hé' } },
    ]);
  });
});

describe('EventsToWire', () => {
  it('partials stream, the committed answer adds only the rest, cards and the end map like /chat', () => {
    const w = new EventsToWire('c1');
    const out = [
      ...w.apply({ event: 'partial', data: { token: 'Hello wor' } }),
      ...w.apply({ id: 4, event: 'assistant.message', data: { text: 'Hello world' } }),
      ...w.apply({ id: 5, event: 'tool.call', data: { tool: 'check_health', input: {}, tool_call_id: 't1' } }),
      ...w.apply({ id: 6, event: 'tool.result', data: { tool: 'check_health', status: 'done', output: { ok: 1 }, tool_call_id: 't1', duration_ms: 3 } }),
      ...w.apply({ id: 7, event: 'run.finished', data: { status: 'failed', error_code: 'LLM_UNAVAILABLE', error_detail: 'down' } }),
    ];
    expect(out.map((m) => [m.metadata?.type, m.content])).toEqual([
      ['stream_token', 'Hello wor'],
      ['stream_token', 'Hello world'],
      ['tool_start', 'Hello world'],
      ['tool_end', 'Hello world'],
      ['error', 'Hello world'],
    ]);
    expect(out[1].metadata).toMatchObject({ token: 'ld', conversation_id: 'c1' });
    expect(w.apply({ id: 8, event: 'run.finished', data: { status: 'done' } })).toEqual([]);
  });
});

describe('EventsToWire approval.resolved', () => {
  it('carries the reason the ledger gives (a superseded card reads "Denied (new message)"), and none when it gives none', () => {
    const w = new EventsToWire('c1');
    const [withReason] = w.apply({ id: 3, event: 'approval.resolved', data: { approval_id: 'ap', result: 'denied', reason: 'superseded_by_new_message' } });
    expect(withReason.metadata).toMatchObject({ type: 'confirm_resolved', result: 'denied', approval_id: 'ap', reason: 'superseded_by_new_message' });
    const [without] = w.apply({ id: 4, event: 'approval.resolved', data: { approval_id: 'ap2', result: 'confirmed' } });
    expect(without.metadata).not.toHaveProperty('reason');
  });
});
