/**
 * Which conversation an OpenAI call continues (issue 43, More decisions 7). OpenAI clients resend
 * the whole transcript each call and name no thread, so:
 *
 *   conversation_id (body) or X-Airlock-Conversation-Id  -> that conversation of the caller's
 *                                                           (anyone else's, or none: 404)
 *   else the messages before the last user message        -> the caller's conversation whose
 *        (user and assistant, in order) hashed              transcript, as this face last answered
 *                                                           it, hashes the same; else a new one
 *
 * After each answer the conversation's key moves to the hash of its transcript through that answer
 * (the client's next call sends exactly that as its prefix), stored as the caller's alias of the
 * conversation (conversation_aliases, shared with AG-UI's thread ids) under `openai#`: one per
 * conversation, so an older prefix (an edited or regenerated turn) starts a new conversation rather
 * than continuing a transcript that no longer matches. OpenAI's `user` field is never read.
 * @module
 */
import { createHash } from 'node:crypto';
import { findAlias, moveAlias } from '../db/conversation-aliases.ts';
import { getConversationForUser } from '../db/conversations.ts';
import type { Pool } from '../db/index.ts';
import { AirlockError } from '../errors.ts';
import type { PriorMessage } from './request.ts';

/** The alias namespace of transcript keys (a character AG-UI thread ids may hold, v1 session ids not). */
export const KEY_PREFIX = 'openai#';

/** Pure: the key of a transcript (its messages' roles and trimmed texts, in order). */
export function transcriptKey(messages: PriorMessage[]): string {
  const hash = createHash('sha256');
  for (const m of messages) hash.update(`${JSON.stringify([m.role, m.text.trim()])}\n`);
  return KEY_PREFIX + hash.digest('base64url');
}

/** The conversation this call continues, or null for a new one. */
export async function findConversation(pool: Pool, userId: string, input: { conversationId: string | null; prior: PriorMessage[] }): Promise<string | null> {
  if (input.conversationId) {
    if (await getConversationForUser(pool, { userId, id: input.conversationId })) return input.conversationId;
    throw new AirlockError('NOT_FOUND', 'No such conversation.');
  }
  if (input.prior.length === 0) return null;
  return findAlias(pool, { userId, externalId: transcriptKey(input.prior) });
}

/** After an answer: the conversation's key is now its transcript through `answer`. */
export async function rememberTranscript(pool: Pool, userId: string, conversationId: string, transcript: PriorMessage[]): Promise<void> {
  await moveAlias(pool, { userId, conversationId, externalId: transcriptKey(transcript), prefix: KEY_PREFIX });
}
