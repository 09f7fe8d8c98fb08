/**
 * A real model's conversation title (issue 29, item 3): one small completion, apart from the agent
 * (no tools, no history, no checkpoint), with its cost capped here whoever asks: a few output
 * tokens, one attempt, and a short time limit. What is asked and how the reply is read is
 * engine/model-title.ts; who asks, and when, engine/first-title.ts.
 * @module
 */
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { contentText } from './events.ts';
import { createChatModel, type ModelSettings } from './model.ts';

/** The prompt: the instruction, and the conversation's start it is about. */
export interface TitlePrompt {
  system: string;
  user: string;
}

/** Asks for a title; resolves to the model's raw reply. Rejects on any failure, timeout and abort included. */
export type TitleModel = (prompt: TitlePrompt, signal: AbortSignal) => Promise<string>;

/** A title is about six words: room for them (and a stray quote) in any tokenizer, no room for an essay. */
export const TITLE_MAX_TOKENS = 24;
/** The whole ask, request to last byte: past it the rule's title simply stays. */
export const TITLE_TIMEOUT_MS = 10_000;

/**
 * The title model on the agent's endpoint. No retries: a title is a nicety, never worth a second
 * bill or a wait (the rule's title is already shown).
 * @example const ask = createTitleModel(settings); await ask({ system, user }, AbortSignal.timeout(10_000))
 */
export function createTitleModel(settings: ModelSettings): TitleModel {
  const model = createChatModel({ ...settings, timeoutMs: TITLE_TIMEOUT_MS, maxRetries: 0, maxTokens: TITLE_MAX_TOKENS });
  return async (prompt, signal) => {
    const reply = await model.invoke([new SystemMessage(prompt.system), new HumanMessage(prompt.user)], {
      signal: AbortSignal.any([signal, AbortSignal.timeout(TITLE_TIMEOUT_MS)]),
    });
    return contentText(reply.content);
  };
}
