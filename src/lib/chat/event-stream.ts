/**
 * Reading a conversation's event stream (`GET /api/agent/conversations/:id/events/stream`, SSE) and
 * turning its events into the wire messages /chat sends, so the reducer renders a followed run
 * exactly like an own one. Pure but `readSse`'s input; tests feed bytes one at a time.
 * @module
 */
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

type Payload = Record<string, unknown>;
const s = (v: unknown) => (typeof v === 'string' ? v : '');

/**
 * Ledger events -> /chat wire messages (the server's chat-projection.ts, for the browser): partial
 * frames stream as tokens, a committed answer adds only what the partials did not show.
 */
export class EventsToWire {
  #content = '';
  #segment = '';
  #snapshotNext = false;
  readonly #conversationId: string;

  constructor(conversationId: string) {
    this.#conversationId = conversationId;
  }

  /**
   * The stream was reopened: a process that runs the answer opens with ONE partial holding the
   * segment so far, of which this tab already shows a part.
   */
  reconnected(): void {
    this.#snapshotNext = true;
  }

  apply(frame: SseFrame): WireChatMessage[] {
    const p = (frame.data ?? {}) as Payload;
    const out = (metadata: Payload): WireChatMessage[] => [
      { role: 'assistant', content: this.#content, metadata: { ...metadata, conversation_id: this.#conversationId } as WireChatMessage['metadata'] },
    ];
    if (frame.event !== 'partial') this.#snapshotNext = false;
    switch (frame.event) {
      case 'partial': {
        let token = s(p.token);
        if (this.#snapshotNext) {
          this.#snapshotNext = false;
          token = token.startsWith(this.#segment) ? token.slice(this.#segment.length) : '';
          if (!token) return [];
        }
        this.#content += token;
        this.#segment += token;
        return out({ type: 'stream_token', token });
      }
      case 'assistant.message': {
        const text = s(p.text);
        const rest = text.startsWith(this.#segment) ? text.slice(this.#segment.length) : '';
        this.#segment = '';
        if (!rest) return [];
        this.#content += rest;
        return out({ type: 'stream_token', token: rest });
      }
      case 'tool.call':
        this.#segment = '';
        return out({ type: 'tool_start', tool: p.tool, input: p.input, tool_call_id: p.tool_call_id });
      case 'tool.result':
        return p.status === 'done'
          ? out({ type: 'tool_end', tool: p.tool, output: p.output, tool_call_id: p.tool_call_id, duration_ms: p.duration_ms })
          : out({ type: 'tool_error', tool: p.tool, error: p.error, tool_call_id: p.tool_call_id, code: p.code });
      case 'approval.requested':
        this.#segment = '';
        return out({ type: 'confirm_required', prompt: p.prompt, thread_id: this.#conversationId, approval_id: p.approval_id, tool: p.tool, input: p.input, expires_at: p.expires_at, timeout_s: p.timeout_s });
      case 'approval.resolved':
        // `reason` (v1's words) once the gateway records it: "Denied (new message)" on the card.
        return out({ type: 'confirm_resolved', result: p.result, approval_id: p.approval_id, ...(typeof p.reason === 'string' ? { reason: p.reason } : {}) });
      case 'run.finished':
        return p.status === 'failed' ? out({ type: 'error', code: p.error_code ?? 'INTERNAL', detail: s(p.error_detail), retryable: true }) : [];
      default:
        return [];
    }
  }
}
