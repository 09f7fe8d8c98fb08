/**
 * The two paths a chat bench drives, each timed from its submit: the reference pipeline over a raw
 * POST (bench/reference.ts) and /chat through the real @gradio/client. Shared by chat.bench.ts and
 * turn-profile.ts.
 */
import type { Client } from '@gradio/client';
import { traceMark } from './trace-sql.ts';

export interface Timing {
  ttftMs: number;
  perTokenMs: number;
  tokens: number;
  last?: any;
}

/** The reference: POST, then raw frames; `paused` when the graph stopped at its gate. */
export async function viaReference(url: string, text: string, thread = '', resume = false, onFirst?: () => Promise<void>): Promise<Timing & { paused: boolean }> {
  const start = performance.now();
  const res = await fetch(`${url}?thread=${thread}${resume ? '&resume=1' : ''}`, { method: 'POST', body: text });
  let first = 0;
  let tokens = 0;
  let paused = false;
  const decoder = new TextDecoder();
  for await (const chunk of res.body!) {
    const now = performance.now();
    for (const line of decoder.decode(chunk, { stream: true }).split('\n')) {
      if (line.includes('"paused":true')) paused = true;
      if (!line.includes('"process_generating"')) continue;
      if (!first && onFirst) await onFirst();
      tokens++;
      first ||= now;
    }
  }
  const end = performance.now();
  return { ttftMs: first - start, perTokenMs: (end - first) / Math.max(1, tokens - 1), tokens, paused };
}

/**
 * No `conversationId`: a new conversation ("new"), as the reference's empty thread is a new thread.
 * An empty one would continue the client's Gradio session (issue 24 item 2), and every submit of
 * the bench would grow one history, which the reference never does.
 */
export async function viaChat(client: Client, text: string, conversationId = 'new', action = '', onFirst?: () => Promise<void>): Promise<Timing> {
  const start = performance.now();
  traceMark(`/chat submit ${action || text}`);
  let first = 0;
  let tokens = 0;
  let last: any;
  const submission = client.submit('/chat', { message: { text, files: [] }, conversation_id: conversationId, action });
  for await (const event of submission) {
    if (event.type !== 'data') continue;
    last = (event.data as unknown[])[0];
    if (last.metadata.type !== 'stream_token') continue;
    tokens++;
    if (!first) (first = performance.now()), traceMark('/chat first token'), await onFirst?.();
  }
  const end = performance.now();
  return { ttftMs: first - start, perTokenMs: (end - first) / Math.max(1, tokens - 1), tokens, last: structuredClone(last) };
}
