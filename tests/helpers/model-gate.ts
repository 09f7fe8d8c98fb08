/**
 * A model endpoint that holds the next streamed completion until the test lets it go (queued-input
 * tests: a turn that is running, for as long as the test needs, with no timing involved). In front
 * of the offline model (model-proxy.ts); every other request passes unchanged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startOfflineModelServer } from '../../server/agent/offline-model/server.ts';
import { startModelProxy } from './model-proxy.ts';

export interface ModelGate {
  /** OPENAI_BASE_URL for the gateway. */
  url: string;
  /** Holds the next streamed completion; resolves once it arrived (its turn is running). */
  hold(): Promise<void>;
  /** Lets every held completion go on to the offline model. */
  release(): void;
  close(): Promise<void>;
}

export async function startModelGate(): Promise<ModelGate> {
  const model = await startOfflineModelServer({ delayMs: 0, modelName: 'airlock-offline-1' });
  let armed: (() => void) | null = null;
  let held: Array<() => void> = [];
  const proxy = await startModelProxy(model.baseUrl, async (req: IncomingMessage, _res: ServerResponse, body: Buffer) => {
    if (!armed || !req.url?.endsWith('/chat/completions') || !JSON.parse(body.toString()).stream) return false;
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
    release,
    async close() {
      release();
      await proxy.close();
      await model.close();
    },
  };
}
