/**
 * Whose thread it is: the AG-UI threadId is the conversation id. An unknown threadId becomes a
 * new conversation of the caller's; another user's is 404, exactly like a missing one (the id's
 * existence is not revealed, and it cannot be taken over).
 * @module
 */
import { createConversation, getConversationForUser } from '../db/conversations.ts';
import type { Pool } from '../db/index.ts';
import { AirlockError, isAirlockError } from '../errors.ts';

const notFound = () => new AirlockError('NOT_FOUND', 'No such thread.');

/** The caller's thread; created with this id when `create` and nobody has it; else 404. */
export async function ownThread(pool: Pool, input: { userId: string; threadId: string; create?: { text: string } }): Promise<void> {
  if (await getConversationForUser(pool, { userId: input.userId, id: input.threadId })) return;
  if (!input.create) throw notFound();
  try {
    await createConversation(pool, { userId: input.userId, id: input.threadId, text: input.create.text });
  } catch (error) {
    if (!isAirlockError(error) || error.code !== 'CONFLICT') throw error;
    // Taken meanwhile: by this caller (a concurrent first run) it is theirs; else it is not.
    if (!(await getConversationForUser(pool, { userId: input.userId, id: input.threadId }))) throw notFound();
  }
}
