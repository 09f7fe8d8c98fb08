/**
 * What the OpenAI face reads of a Chat Completions request (issue 43 item 4, More decisions 7),
 * validated with zod at the edge. Only the last `user` message is new input; `system` messages are
 * the caller's system text (as v1's); the messages before the last user message only find the
 * conversation (conversation.ts). Client-sent `assistant`/`tool` messages, `tools`, `tool_choice`
 * and `functions` are never executed nor forwarded, `user` is never read, and any `model` is
 * accepted: the agent, its tools and its policy are the server's. Unknown fields are ignored, as
 * OpenAI-compatible servers do (clients send temperature, top_p, n…).
 * @module
 */
import { z } from 'zod';
import { AirlockError } from '../errors.ts';
import { parseInput } from '../http/index.ts';

/** A message's content: a string or OpenAI's content parts (only `text` parts are read). */
const Content = z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() })).max(100)]).nullish();

const Message = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: Content,
});

const ConversationId = z.uuid('must be a conversation id (a UUID)');

export const ChatRequest = z.looseObject({
  model: z.string().min(1).max(200),
  messages: z.array(Message).min(1, 'must hold at least one message').max(500),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  /** Airlock's extra body field: the conversation this call continues (also the X-Airlock-Conversation-Id header). */
  conversation_id: ConversationId.nullish(),
});

export const CONVERSATION_HEADER = 'x-airlock-conversation-id';

/** One earlier message as the conversation's transcript holds it. */
export interface PriorMessage {
  role: 'user' | 'assistant';
  text: string;
}

export interface ChatInput {
  /** The new input: the last user message's text. */
  text: string;
  /** The caller's system and developer messages, joined (put before the agent's own), or null. */
  system: string | null;
  /** The user and assistant messages before the last user message (what finds the conversation). */
  prior: PriorMessage[];
  /** The conversation named by the body or the header, or null. */
  conversationId: string | null;
  stream: boolean;
  /** stream_options.include_usage: a last chunk with `usage` and no choices. */
  includeUsage: boolean;
}

/** Pure: the text of a message's content (text parts joined; images and audio are not read). */
export function textOf(content: z.infer<typeof Content>): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => (p.type === 'text' ? (p.text ?? '') : '')).join('');
}

/** Parses a request (body and headers); VALIDATION_ERROR naming the first bad field. */
export function parseChatRequest(body: unknown, headers: Record<string, string | string[] | undefined>): ChatInput {
  const r = parseInput(ChatRequest, body, 'body');
  const header = headers[CONVERSATION_HEADER];
  const fromHeader = typeof header === 'string' && header.trim() ? parseInput(z.object({ [CONVERSATION_HEADER]: ConversationId }), { [CONVERSATION_HEADER]: header.trim() }, 'headers')[CONVERSATION_HEADER] : null;
  const last = r.messages.findLastIndex((m) => m.role === 'user');
  const text = last >= 0 ? textOf(r.messages[last].content).trim() : '';
  if (!text) throw new AirlockError('VALIDATION_ERROR', 'messages must include a user message with text.', { details: [{ path: 'messages', message: 'no user message with text', location: 'body' }] });
  const system = r.messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content).trim()).filter(Boolean).join('\n\n') || null;
  const prior = r.messages.slice(0, last).flatMap((m): PriorMessage[] => (m.role === 'user' || m.role === 'assistant' ? [{ role: m.role, text: textOf(m.content).trim() }] : []));
  return {
    text,
    system,
    prior,
    conversationId: (r.conversation_id ?? fromHeader)?.toLowerCase() ?? null,
    stream: r.stream === true,
    includeUsage: r.stream_options?.include_usage === true,
  };
}
