import { describe, expect, it } from 'vitest';
import { createChatModel, usesResponsesApi } from '../../../../server/agent/model.ts';

const settings = { baseUrl: 'http://127.0.0.1:8000/v1/', apiKey: 'k', name: 'airlock-offline-1', timeoutMs: 1234, maxRetries: 2 };

describe('createChatModel', () => {
  it('builds ChatOpenAI with streaming left unset (token deltas in graph streams, no tiktoken download)', () => {
    const model = createChatModel(settings);
    expect(model.streaming).toBe(false);
    expect(model.disableStreaming).toBeFalsy();
    expect(model.model).toBe('airlock-offline-1');
    expect(model.timeout).toBe(1234);
    expect((model as unknown as { clientConfig: { baseURL: string } }).clientConfig.baseURL).toBe('http://127.0.0.1:8000/v1');
  });

  it('builds its OpenAI SDK client once: copies bound to tools (one per model call) share it', () => {
    const model = createChatModel(settings);
    const tool = { type: 'function' as const, function: { name: 'ping', description: 'Ping.', parameters: { type: 'object', properties: {} } } };
    // ChatOpenAI's delegates and options are protected: read them through their shape.
    type Internals = { completions: { _getClientOptions(options: undefined): unknown; client?: unknown }; defaultOptions?: { tools?: unknown[] } };
    const [a, b] = [model.bindTools([tool]), model.bindTools([tool])] as unknown as Internals[];
    const original = model as unknown as Internals;
    // The request options each call builds are where the client is made (lazily, once per delegate).
    const clientOf = (m: Internals) => {
      m.completions._getClientOptions(undefined);
      return m.completions.client;
    };
    expect(clientOf(a)).toBeDefined();
    expect(clientOf(b)).toBe(clientOf(a));
    expect(clientOf(original)).toBe(clientOf(a));
    // The tools stay per copy.
    expect(a.defaultOptions?.tools).toHaveLength(1);
    expect(original.defaultOptions?.tools).toBeUndefined();
  });

  it.each([
    ['gpt-4o-mini', false],
    ['llama3.1:8b', false],
    ['gpt-5.1-codex', true],
    ['gpt-5.6', true],
    ['gpt-5.4-pro', true],
  ])('%s uses the Responses API: %s', (name, expected) => {
    expect(usesResponsesApi(name)).toBe(expected);
    if (expected) expect(() => createChatModel({ ...settings, name })).toThrow(/Responses API/);
  });
});
