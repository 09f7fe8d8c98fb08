/**
 * A model endpoint that holds the next streamed completion until the test lets it go (queued-input
 * tests: a turn that is running, for as long as the test needs, with no timing involved), or holds
 * it mid-answer after its first tokens (partials tests: an answer half streamed). In front of the
 * offline model (model-proxy.ts); every other request passes unchanged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startOfflineModelServer } from '../../server/agent/offline-model/server.ts';
import { startModelProxy } from './model-proxy.ts';

export interface ModelGate {
  /** OPENAI_BASE_URL for the gateway. */
  url: string;
  /** Holds the next streamed completion; resolves once it arrived (its turn is running). */
  hold(): Promise<void>;
  /**
   * Lets the next streamed completion with text send `tokens` content chunks, then holds it;
   * resolves with their text once they were written to the gateway.
   */
  holdAfter(tokens: number): Promise<string>;
  /** Lets every held completion go on. */
  release(): void;
  close(): Promise<void>;
}

export async function startModelGate(): Promise<ModelGate> {
  const model = await startOfflineModelServer({ delayMs: 0, modelName: 'airlock-offline-1' });
  let armed: (() => void) | null = null;
  let armedAfter: { tokens: number; arrived: (text: string) => void } | null = null;
  let held: Array<() => void> = [];
  const proxy = await startModelProxy(model.baseUrl, async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const streamed = req.url?.endsWith('/chat/completions') && JSON.parse(body.toString()).stream;
    if (armedAfter && streamed) {
      // A completion with fewer tokens (a tool call) goes through whole, and the next is held.
      const after = armedAfter;
      const pause = (text: string) => new Promise<void>((go) => ((armedAfter = null), held.push(go), after.arrived(text)));
      await holdMidAnswer(`${model.baseUrl}/chat/completions`, body, res, after.tokens, pause);
      return true;
    }
    if (!armed || !streamed) return false;
    const arrived = armed;
    armed = null;
    await new Promise<void>((resolve) => {
      held.push(resolve);
      arrived();
    });
    return false; // forwarded now
  });
  const release = () => {
    for (const go of held) go();
    held = [];
  };
  return {
    url: proxy.url,
    hold: () => new Promise<void>((resolve) => (armed = resolve)),
    holdAfter: (tokens) => new Promise<string>((arrived) => (armedAfter = { tokens, arrived })),
    release,
    async close() {
      release();
      await proxy.close();
      await model.close();
    },
  };
}

/** Streams the completion event by event; after `tokens` content chunks, waits for `pause(text)`. */
async function holdMidAnswer(url: string, body: Buffer, res: ServerResponse, tokens: number, pause: (text: string) => Promise<void>): Promise<void> {
  const upstream = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: new Uint8Array(body) });
  res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/event-stream' });
  const decoder = new TextDecoder();
  let buffer = '';
  let text = '';
  let sent = 0;
  for await (const part of upstream.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(part, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end + 2);
      buffer = buffer.slice(end + 2);
      await new Promise<void>((written) => res.write(event, () => written()));
      const data = event.startsWith('data: ') ? event.slice(6).trim() : '';
      const content = data && data !== '[DONE]' ? (JSON.parse(data).choices?.[0]?.delta?.content ?? '') : '';
      if (!content || sent >= tokens) continue;
      text += content;
      if (++sent === tokens) await pause(text);
    }
  }
  res.end(buffer);
}
