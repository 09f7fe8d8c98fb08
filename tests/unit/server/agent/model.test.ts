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
