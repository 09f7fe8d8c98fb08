/**
 * OpenAI wire shapes for a decision: streamed `chat.completion.chunk`s (text word by word,
 * tool-call deltas in the standard format) or one `chat.completion`. Pure apart from fresh ids.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Decision } from './respond.ts';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Words with their trailing whitespace, so the deltas concatenate back to the text. */
export function splitWords(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? [];
}

/** A unique completion id: the messages reducer replaces messages that share an id (notes §4). */
export function newCompletionId(): string {
  return `chatcmpl-${randomUUID()}`;
}

/** A unique tool call id: it is also the backend's idempotency key, so it must never repeat. */
export function newToolCallId(): string {
  return `call_${randomUUID().replace(/-/g, '')}`;
}

/** Rough token counts (words) for the usage fields. */
export function estimateUsage(promptText: string, completionText: string): Usage {
  const count = (s: string) => splitWords(s).length;
  const prompt_tokens = count(promptText);
  const completion_tokens = count(completionText);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

interface WithIds {
  id: string;
  model: string;
  created: number;
}

function chunk(base: WithIds, delta: object, finish: string | null = null) {
  return { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** Tool calls of a decision with their ids and JSON arguments. */
export function toolCallsOf(decision: Decision, makeId = newToolCallId) {
  if (decision.type !== 'tool_calls') return [];
  return decision.calls.map((c) => ({ id: makeId(), type: 'function' as const, function: { name: c.tool, arguments: JSON.stringify(c.args) } }));
}

/** The chunks of a streamed completion, in order (the caller adds pacing and `[DONE]`). */
export function streamChunks(base: WithIds, decision: Decision, usage: Usage | null, makeId = newToolCallId): object[] {
  const out: object[] = [chunk(base, { role: 'assistant', content: '' })];
  if (decision.type === 'text') {
    for (const word of splitWords(decision.text)) out.push(chunk(base, { content: word }));
    out.push(chunk(base, {}, 'stop'));
  } else {
    toolCallsOf(decision, makeId).forEach((call, index) => {
      out.push(chunk(base, { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
      // Arguments in two fragments, as real servers split them.
      const a = call.function.arguments;
      const cut = Math.ceil(a.length / 2);
      for (const part of [a.slice(0, cut), a.slice(cut)]) {
        if (part) out.push(chunk(base, { tool_calls: [{ index, function: { arguments: part } }] }));
      }
    });
    out.push(chunk(base, {}, 'tool_calls'));
  }
  if (usage) out.push({ ...base, object: 'chat.completion.chunk', choices: [], usage });
  return out;
}

/** A whole (non-streamed) completion. */
export function completionBody(base: WithIds, decision: Decision, usage: Usage, makeId = newToolCallId) {
  const message =
    decision.type === 'text'
      ? { role: 'assistant', content: decision.text }
      : { role: 'assistant', content: null, tool_calls: toolCallsOf(decision, makeId) };
  return {
    ...base,
    object: 'chat.completion',
    choices: [{ index: 0, message, finish_reason: decision.type === 'text' ? 'stop' : 'tool_calls' }],
    usage,
  };
}
