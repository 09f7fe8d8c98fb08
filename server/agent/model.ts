/**
 * The chat model: always ChatOpenAI, against any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama,
 * the offline model).
 * @module
 */
import { ChatOpenAI, ChatOpenAICompletions, ChatOpenAIResponses } from '@langchain/openai';
import { idleTimeoutFetch, meteredFetch } from './model-fetch.ts';

export interface ModelSettings {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:3000/api/offline-model/v1`. */
  baseUrl: string;
  apiKey: string;
  name: string;
  timeoutMs: number;
  /** Retries after the first attempt (the OpenAI SDK backs off between them). */
  maxRetries: number;
  /** A streamed answer silent this long between chunks fails (MODEL_IDLE_TIMEOUT_MS; default 60 s). */
  idleTimeoutMs?: number;
  /** Output tokens per answer at most (a conversation title's cost cap); absent: the model's own limit. */
  maxTokens?: number;
}

/** Names that make ChatOpenAI switch to the Responses API, which chat-completions servers lack (notes §4). */
const RESPONSES_API_NAMES = /codex|gpt-5\.6|gpt-5\.\d+-pro/i;

/**
 * Builds the ChatOpenAI client. `streaming` stays unset on purpose (notes §2): graph streaming then
 * asks for token deltas, while a plain invoke stays non-streamed and never needs the tiktoken download.
 * @example createChatModel({ baseUrl: 'http://127.0.0.1:8000/v1', apiKey: 'x', name: 'm', timeoutMs: 60_000, maxRetries: 2 })
 */
export function createChatModel(settings: ModelSettings): ChatOpenAI {
  if (usesResponsesApi(settings.name)) {
    // ChatOpenAI would switch to POST /responses whatever we pass; chat-completions servers lack it.
    throw new Error(`Model name "${settings.name}" makes ChatOpenAI use the Responses API; Airlock speaks chat completions only. Choose another OPENAI_MODEL name.`);
  }
  const fields = {
    model: settings.name,
    apiKey: settings.apiKey || 'unused',
    timeout: settings.timeoutMs,
    maxRetries: settings.maxRetries,
    maxTokens: settings.maxTokens,
    // `timeout` ends a request whose answer does not start; the fetch ends one that stops midway.
    configuration: { baseURL: settings.baseUrl.replace(/\/+$/, ''), fetch: meteredFetch(idleTimeoutFetch(settings.idleTimeoutMs ?? 60_000)) },
  };
  // The delegates go into the fields, so every copy shares them: ChatOpenAI.withConfig (what
  // bindTools does on each model call) builds a new ChatOpenAI from its fields, and without them
  // new delegates, each building its own OpenAI SDK client before the request is sent.
  return new ChatOpenAI({ ...fields, completions: new ChatOpenAICompletions(fields), responses: new ChatOpenAIResponses(fields) });
}

/** True when ChatOpenAI would silently use the Responses API for this model name. */
export function usesResponsesApi(name: string): boolean {
  return RESPONSES_API_NAMES.test(name);
}
