/**
 * What Python's `client.predict(message={...}, api_name="/chat")` sends (gradio_client 2.6.0, which
 * cannot be installed here, so its request sequence is replayed): the join with every parameter
 * (defaults filled in from /info), `fn_index` and the Client's one session_hash, then the session's
 * stream, read to the completion.
 */
import { expect } from 'vitest';
import { readRawStream } from '../integration/gradio-server.ts';
import type { WireMessage } from './chat-client.ts';

/** The /chat endpoint's fn_index, from /config (`base` is the Gradio mount). */
export async function chatFnIndex(base: string, token: string): Promise<number> {
  const config = await (await fetch(`${base}/config`, { headers: { authorization: `Bearer ${token}` } })).json();
  return config.dependencies.find((d: { api_name: string }) => d.api_name === 'chat').id;
}

/** Python fills every parameter: message, conversation_id, action, text, files, request_id, approval_id. */
export const pyData = (text: string, conversationId: string | null = null): unknown[] => [{ text, files: [] }, conversationId, null, null, null, null, null];

/** One predict(); returns the completion's ChatMessage and frame. */
export async function pythonPredict(
  target: { base: string; chatIndex: number },
  token: string,
  sessionHash: string,
  data: unknown[],
): Promise<{ success: boolean; message: WireMessage; frame: any }> {
  const { base, chatIndex } = target;
  const headers = { authorization: `Bearer ${token}`, 'user-agent': 'python-httpx/0.28.1', 'x-gradio-user': 'api' };
  const join = await fetch(`${base}/gradio_api/queue/join`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ data, fn_index: chatIndex, session_hash: sessionHash }),
  });
  expect(join.status).toBe(200);
  const { event_id: eventId } = await join.json();
  const stream = await fetch(`${base}/gradio_api/queue/data?session_hash=${sessionHash}`, { headers });
  const { frames } = await readRawStream(stream, (f) => f.some((x) => x.msg === 'process_completed' && x.event_id === eventId));
  const done = frames.find((x) => x.msg === 'process_completed' && x.event_id === eventId);
  return { success: done.success, message: done.output?.data?.[0], frame: done };
}
