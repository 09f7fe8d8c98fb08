/**
 * The offline model's own server closes at once on shutdown: a stream still in flight (its run has
 * been stopped already) is cut, not waited for. Waiting held a graceful stop for seconds, past the
 * grace, and the process then left by the forced exit (code 1).
 */
import { describe, expect, it } from 'vitest';
import { startOfflineModelServer } from '../../../../../server/agent/offline-model/server.ts';

describe('offline model server', () => {
  it('close() cuts a stream in flight instead of waiting for the rest of its answer', async () => {
    const model = await startOfflineModelServer({ delayMs: 40, modelName: 'airlock-offline-1' });
    const res = await fetch(`${model.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'airlock-offline-1', stream: true, messages: [{ role: 'user', content: 'tell me about yourself and what you can help me with' }] }),
    });
    const reader = res.body!.getReader();
    expect((await reader.read()).done).toBe(false); // the stream is open
    const decoder = new TextDecoder();
    const rest = (async () => {
      let text = '';
      try {
        for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value, { stream: true });
      } catch {
        // the cut connection
      }
      return text;
    })();
    await model.close();
    // Waiting for the answer would have let it finish first, with its [DONE].
    expect(await rest).not.toContain('[DONE]');
  });
});
