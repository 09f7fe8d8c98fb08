/**
 * One ledger -> /chat projection for the gateway and the UI: a fixture ledger run projected by the
 * gateway (server/chat) and, as the event stream's SSE bytes, by the UI's follower
 * (src/lib/chat/event-stream.ts) gives the same messages. The follower leaves out only the report
 * on the files of a user message it does not show.
 */
import { describe, expect, it } from 'vitest';
import { chatMessage } from '../../../../../src/lib/wire/index.ts';
import { ChatProjection as GatewayProjection } from '../../../../../server/chat/chat-projection.ts';
import { isCommitted, validateDraft } from '../../../../../server/engine/index.ts';
import { sseFrame } from '../../../../../server/http/sse-format.ts';
import { EventsToWire, readSse } from '../../../../../src/lib/chat/event-stream.ts';
import { ChatProjection } from '../../../../../src/lib/wire/index.ts';
import { CONVERSATION, LEDGER_RUN } from './ledger-fixture.ts';

/** The run as `/events/stream` sends it (events/event-stream.ts): committed events with their seq, partials without. */
async function* streamed(): AsyncGenerator<Uint8Array> {
  for (const event of LEDGER_RUN) {
    const frame = isCommitted(event) ? { id: event.seq, event: event.kind, data: event.payload } : { event: 'partial', data: event.payload };
    yield new TextEncoder().encode(sseFrame(frame));
  }
}

describe('the ledger -> /chat projection, shared by the gateway and the UI', () => {
  it('reads a fixture the ledger itself accepts (every committed event passes its payload schema)', () => {
    for (const event of LEDGER_RUN.filter(isCommitted)) expect(() => validateDraft(event), event.kind).not.toThrow();
  });

  it('is one class', () => {
    expect(GatewayProjection).toBe(ChatProjection);
  });

  it('projects a ledger run to the same messages for a /chat caller and a tab following it', async () => {
    // The gateway's messages, each with the answer so far, as the handler sends them (chat-handler.ts).
    const gateway = new GatewayProjection();
    const viaChat = LEDGER_RUN.flatMap((event) => gateway.apply(event, CONVERSATION).map((metadata) => chatMessage(CONVERSATION, gateway.content, metadata)));

    const follower = new EventsToWire(CONVERSATION);
    const viaStream = [];
    for await (const frame of readSse(streamed())) viaStream.push(...follower.apply(frame));

    expect(viaStream).toEqual(viaChat.filter((m) => m.metadata.type !== 'attachments'));
    expect(viaChat.map((m) => m.metadata.type)).toEqual([
      'attachments', 'stream_token', 'stream_token', 'tool_start', 'tool_end', 'tool_start', 'tool_error', 'error', 'tool_start', 'tool_error',
      'stream_token', 'confirm_required', 'confirm_progress', 'confirm_resolved', 'stream_token', 'error',
    ]);
  });
});
