/**
 * Names a conversation after its first completed answer (issue 29, item 3), inside the commit that
 * ends the turn (turn-end.ts): the rule's title (title-rule.ts) from the first user message and the
 * answer, never over a title the user gave (db setFirstAnswerTitle).
 * @module
 */
import { firstUserMessage, setFirstAnswerTitle } from '../db/conversations.ts';
import type { Queryable } from '../db/pool.ts';
import { titleFor } from './title-rule.ts';

/** Writes the model's title when run `runId` is the conversation's first to end done. True when written. */
export async function nameAfterFirstAnswer(tx: Queryable, input: { conversationId: string; runId: string; answer: string }): Promise<boolean> {
  const title = titleFor(await firstUserMessage(tx, input.conversationId), input.answer);
  return setFirstAnswerTitle(tx, { id: input.conversationId, runId: input.runId, title });
}
