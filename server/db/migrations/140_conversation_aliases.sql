-- Conversation aliases (issue 24 item 1): a client's own name for a conversation, per user. An
-- AG-UI threadId that is not a conversation id (any string of 1-128 characters, "thread_abc123")
-- maps here to a conversation of the caller's; the v1 session_id is meant to share this table.
-- Keyed by (user, external id): another user's alias of the same name is another conversation, so
-- a name can never reach someone else's thread. The alias goes with its conversation or its user.
CREATE TABLE IF NOT EXISTS conversation_aliases (
  user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  external_id     text NOT NULL CHECK (length(external_id) BETWEEN 1 AND 128),
  conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, external_id)
);
CREATE INDEX IF NOT EXISTS conversation_aliases_by_conversation ON conversation_aliases (conversation_id);
