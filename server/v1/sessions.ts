/**
 * A headless run's `session_id` (issue 24, seed 000: an opaque string, 1-128 characters of
 * [A-Za-z0-9._:-]). A UUID is the conversation id itself, as before. Any other string is the
 * caller's alias of a conversation in the table AG-UI's threadIds use (db/conversation-aliases.ts,
 * keyed by user and string): an unknown one becomes a new conversation of the caller's, the same
 * string from another user is that user's own conversation. Answers echo the caller's string
 * (agent_runs.session_ref, migration 142).
 * @module
 */
import { claimAlias, findAlias } from '../db/conversation-aliases.ts';
import { createConversation, getConversationForUser } from '../db/conversations.ts';
import type { Pool } from '../db/index.ts';
import { AirlockError, isAirlockError } from '../errors.ts';
import { isUuid, type RunRequest } from './schemas.ts';

const notFound = () => new AirlockError('NOT_FOUND', 'This session does not exist.');

/**
 * The request with `sessionId` the caller's conversation: an alias names one (created when new);
 * a UUID is the conversation itself, created with that id when nobody has it, 404 when it is
 * another user's (as AG-UI's threadId: its existence is not revealed, and it cannot be taken over).
 */
export async function resolveSession(pool: Pool, userId: string, input: RunRequest): Promise<RunRequest> {
  if (input.sessionRef) return { ...input, sessionId: await claimAlias(pool, { userId, externalId: input.sessionRef, text: input.text }) };
  const id = input.sessionId;
  if (!id || (await getConversationForUser(pool, { userId, id }))) return input;
  try {
    await createConversation(pool, { userId, id, text: input.text });
  } catch (error) {
    if (!isAirlockError(error) || error.code !== 'CONFLICT') throw error;
    // Taken meanwhile: by this caller (a concurrent first run) it is theirs; else it is not.
    if (!(await getConversationForUser(pool, { userId, id }))) throw notFound();
  }
  return input;
}

/**
 * The conversation a `session_id` filter names for this caller, without creating anything: a UUID
 * is the conversation id; another string the caller's own alias, or null when they have none
 * (nothing of theirs is in it). Reads never resolve another user's alias.
 */
export async function sessionFilter(pool: Pool, userId: string, sessionId: string): Promise<string | null> {
  if (isUuid(sessionId)) return sessionId.toLowerCase();
  return findAlias(pool, { userId, externalId: sessionId });
}

/** The session_id a run's answers carry: the caller's string when they gave an alias. */
export const sessionIdOf = (run: { sessionId: string | null; sessionRef: string | null }): string | null => run.sessionRef ?? run.sessionId;
