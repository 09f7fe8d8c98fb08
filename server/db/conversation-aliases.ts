/**
 * Conversation aliases: a client's own name for a conversation (an AG-UI threadId that is not a
 * conversation id), per user. `(user_id, external_id)` is the key, so the same name used by two
 * users is two conversations, and a name never resolves to someone else's. Migration 140.
 * @module
 */
import { AirlockError } from '../errors.ts';
import { createConversation } from './conversations.ts';
import { withTransaction, type Pool, type Queryable } from './pool.ts';

/** The conversation `externalId` names for `userId`, or null when it names none yet. */
export async function findAlias(q: Queryable, input: { userId: string; externalId: string }): Promise<string | null> {
  const { rows } = await q.query<{ conversation_id: string }>(
    'SELECT conversation_id FROM conversation_aliases WHERE user_id = $1 AND external_id = $2',
    [input.userId, input.externalId],
  );
  return rows[0]?.conversation_id ?? null;
}

class Taken extends Error {}

/**
 * The conversation `externalId` names for `userId`; when it names none, a new conversation of the
 * user's (titled from `text`) and its alias, in one transaction. Two first calls at once get the
 * same conversation: the loser's insert waits for the winner's commit, and its own conversation is
 * rolled back.
 */
export async function claimAlias(pool: Pool, input: { userId: string; externalId: string; text: string }): Promise<string> {
  const found = await findAlias(pool, input);
  if (found) return found;
  try {
    return await withTransaction(pool, async (tx) => {
      const conversation = await createConversation(tx, { userId: input.userId, text: input.text });
      const { rowCount } = await tx.query(
        `INSERT INTO conversation_aliases (user_id, external_id, conversation_id) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, external_id) DO NOTHING`,
        [input.userId, input.externalId, conversation.id],
      );
      if (rowCount !== 1) throw new Taken();
      return conversation.id;
    });
  } catch (error) {
    if (!(error instanceof Taken)) throw error;
    const winner = await findAlias(pool, input);
    if (!winner) throw new AirlockError('CONFLICT', 'This thread was being created and is gone; try again.');
    return winner;
  }
}

/**
 * Makes `externalId` name `conversationId` for `userId`, and drops the user's other aliases of that
 * conversation that start with `prefix` (the OpenAI face keeps one: the hash of its transcript as
 * last answered, so an older prefix no longer finds it). One transaction.
 */
export async function moveAlias(pool: Pool, input: { userId: string; externalId: string; conversationId: string; prefix: string }): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await tx.query(
      `DELETE FROM conversation_aliases WHERE user_id = $1 AND conversation_id = $2 AND starts_with(external_id, $3) AND external_id <> $4`,
      [input.userId, input.conversationId, input.prefix, input.externalId],
    );
    await tx.query(
      `INSERT INTO conversation_aliases (user_id, external_id, conversation_id) VALUES ($1, $2, $3)
       ON CONFLICT (user_id, external_id) DO UPDATE SET conversation_id = EXCLUDED.conversation_id, created_at = now()`,
      [input.userId, input.externalId, input.conversationId],
    );
  });
}
