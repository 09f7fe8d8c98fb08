/**
 * Reading a conversation's event stream (`GET /api/agent/conversations/:id/events/stream`, SSE) and
 * turning its events into the wire messages /chat sends, so the reducer renders a followed run
 * exactly like an own one. Pure but `readSse`'s input; tests feed bytes one at a time.
 * @module
 */
import { ChatProjection, chatMessage, type ProjectedEvent } from '../wire/index.ts';
import type { WireChatMessage } from './types.ts';

export interface SseFrame {
  id?: number;
  event: string;
  data: unknown;
}

/** Frames out of a byte stream (comments and heartbeats skipped). */
export async function* readSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const frame: SseFrame = { event: 'message', data: null };
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) frame.id = Number(line.slice(4));
        else if (line.startsWith('event: ')) frame.event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (!data.length) continue; // a comment (heartbeat) or an empty block
      frame.data = JSON.parse(data.join('\n'));
      yield frame;
    }
  }
}

/**
 * Ledger events -> /chat wire messages, by the gateway's own projection (src/lib/wire): partial
 * frames stream as tokens, a `partial_snapshot` (the answer so far when the stream attached)
 * adds only what this tab does not show yet, a committed answer only what the partials did not.
 */
export class EventsToWire {
  readonly #projection = new ChatProjection();
  readonly #conversationId: string;

  constructor(conversationId: string) {
    this.#conversationId = conversationId;
  }

  apply(frame: SseFrame): WireChatMessage[] {
    const event = { kind: frame.event, payload: frame.data ?? {} } as ProjectedEvent;
    return (
      this.#projection
        .apply(event, this.#conversationId)
        // A followed run's user message is not shown here (history shows it when the run ends),
        // so neither is the report on its files.
        .filter((metadata) => metadata.type !== 'attachments')
        .map((metadata) => chatMessage(this.#conversationId, this.#projection.content, metadata))
    );
  }
}
