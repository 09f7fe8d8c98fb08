-- Gradio session continuity (issue 24 item 2): a /chat call with no conversation_id continues the
-- conversation its Gradio session (`session_hash`) used last, as gr.ChatInterface keeps history in
-- per-session State. Keyed by (user, session_hash): another user's session of the same hash is
-- another row, so a hash never reaches someone else's conversation. In PostgreSQL, so that a
-- session's next call on another replica continues too. A row lives as long as its session is in
-- use: one idle past the session lifetime (server/db/gradio-sessions.ts) is gone; it also goes
-- with its conversation or its user.
CREATE TABLE IF NOT EXISTS gradio_session_conversations (
  user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  session_hash    text NOT NULL CHECK (length(session_hash) BETWEEN 1 AND 256),
  conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  used_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, session_hash)
);
CREATE INDEX IF NOT EXISTS gradio_session_conversations_by_use ON gradio_session_conversations (used_at);
CREATE INDEX IF NOT EXISTS gradio_session_conversations_by_conversation ON gradio_session_conversations (conversation_id);
