/**
 * Gradio session continuity (issue 24 item 2, migration 141): which conversation a Gradio client
 * session (`session_hash`) of a user used last, so that a /chat call naming no conversation
 * continues it, as gr.ChatInterface does with its per-session State. Keyed by `(user_id,
 * session_hash)`: the same hash sent by another user is another session. Stored in PostgreSQL, so
 * that the session's next call continues on any replica.
 *
 * A session lives while it is used: a row idle for `SESSION_IDLE_MS` (a day) counts as gone (the
 * client's Gradio session is long over; the next call starts a new conversation) and is deleted
 * when its user's session is next written.
 * @module
 */
import type { Queryable } from './pool.ts';

/** How long an unused Gradio session keeps its conversation. */
export const SESSION_IDLE_MS = 24 * 60 * 60 * 1000;

/** The conversation the user's session used last, or null (none yet, or idle too long). */
export async function sessionConversation(q: Queryable, input: { userId: string; sessionHash: string }): Promise<string | null> {
  const { rows } = await q.query<{ conversation_id: string }>(
    `SELECT conversation_id FROM gradio_session_conversations
      WHERE user_id = $1 AND session_hash = $2 AND used_at > now() - make_interval(secs => $3)`,
    [input.userId, input.sessionHash, SESSION_IDLE_MS / 1000],
  );
  return rows[0]?.conversation_id ?? null;
}

/** Records the conversation the user's session used now (and drops the user's idle sessions). */
export async function rememberSessionConversation(q: Queryable, input: { userId: string; sessionHash: string; conversationId: string }): Promise<void> {
  await q.query(
    `WITH idle AS (
       DELETE FROM gradio_session_conversations
        WHERE user_id = $1 AND session_hash <> $2 AND used_at <= now() - make_interval(secs => $4)
     )
     INSERT INTO gradio_session_conversations (user_id, session_hash, conversation_id) VALUES ($1, $2, $3)
     ON CONFLICT (user_id, session_hash) DO UPDATE SET conversation_id = EXCLUDED.conversation_id, used_at = now()`,
    [input.userId, input.sessionHash, input.conversationId, SESSION_IDLE_MS / 1000],
  );
}
