/**
 * Whose thread it is, and which conversation. AG-UI's threadId is any string (1-128 characters,
 * no control characters):
 *   - a UUID is the conversation id itself (as before): an unknown one becomes a new conversation
 *     of the caller's with that id; another user's is 404, exactly like a missing one (the id's
 *     existence is not revealed, and it cannot be taken over);
 *   - any other string is the caller's alias of a conversation (db/conversation-aliases.ts,
 *     keyed by user and string): an unknown one becomes a new conversation and its alias. The
 *     same string from another user is that user's own conversation, never this one.
 * @module
 */
import { claimAlias, findAlias } from '../db/conversation-aliases.ts';
import { createConversation, getConversationForUser, isUuid } from '../db/conversations.ts';
import type { Pool } from '../db/index.ts';
import { AirlockError, isAirlockError } from '../errors.ts';

const notFound = () => new AirlockError('NOT_FOUND', 'No such thread.');

/**
 * The conversation id of the caller's thread; created when `create` and there is none yet; else
 * 404 (also for a UUID that is another user's conversation).
 */
export async function ownThread(pool: Pool, input: { userId: string; threadId: string; create?: { text: string } }): Promise<string> {
  const { userId, threadId } = input;
  if (!isUuid(threadId)) {
    if (input.create) return claimAlias(pool, { userId, externalId: threadId, text: input.create.text });
    const found = await findAlias(pool, { userId, externalId: threadId });
    if (!found) throw notFound();
    return found;
  }
  const id = threadId.toLowerCase();
  if (await getConversationForUser(pool, { userId, id })) return id;
  if (!input.create) throw notFound();
  try {
    await createConversation(pool, { userId, id, text: input.create.text });
  } catch (error) {
    if (!isAirlockError(error) || error.code !== 'CONFLICT') throw error;
    // Taken meanwhile: by this caller (a concurrent first run) it is theirs; else it is not.
    if (!(await getConversationForUser(pool, { userId, id }))) throw notFound();
  }
  return id;
}
