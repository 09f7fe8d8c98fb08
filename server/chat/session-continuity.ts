/**
 * Gradio session continuity (issue 24 item 2): a /chat call naming no conversation continues the
 * one its Gradio session used last, as gr.ChatInterface keeps history in per-session State; the
 * first call of a session starts it. The key is `(user, session_hash)` (the curl call's body
 * `session_hash`, the queue join's otherwise), stored in PostgreSQL (server/db/gradio-sessions.ts)
 * so that it holds across replicas. `conversation_id` still wins, and `"new"` starts a new
 * conversation within the session (what our UI sends for a new conversation).
 * @module
 */
import { rememberSessionConversation, sessionConversation, type Pool } from '../db/index.ts';
import { latestRunByRequest } from '../db/runs.ts';

/** Where a session's last conversation is kept. */
export interface SessionConversations {
  /**
   * The conversation a call naming none continues. A retry (its `requestId` already names a run of
   * the user's) replays that run as it was sent, whatever the session did since: its conversation,
   * or null when that run created its conversation (it was sent naming none).
   */
  last(userId: string, sessionHash: string, requestId: string | null): Promise<string | null>;
  remember(userId: string, sessionHash: string, conversationId: string): Promise<void>;
}

/** The PostgreSQL-backed store. */
export function sessionConversations(pool: Pool): SessionConversations {
  return {
    last: async (userId, sessionHash, requestId) => {
      const retried = requestId ? await latestRunByRequest(pool, { userId, requestId }) : null;
      if (retried) return retried.openedConversation ? null : retried.conversationId;
      return sessionConversation(pool, { userId, sessionHash });
    },
    remember: (userId, sessionHash, conversationId) => rememberSessionConversation(pool, { userId, sessionHash, conversationId }),
  };
}
