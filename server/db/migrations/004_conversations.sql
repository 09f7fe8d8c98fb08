-- Conversations, their messages, and the multi-tab lease.

-- A title from a message: whitespace collapsed, at most 60 characters. NULL when empty.
CREATE OR REPLACE FUNCTION airlock_derive_title(content text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN t = '' THEN NULL
    WHEN char_length(t) <= 60 THEN t
    ELSE rtrim(left(t, 59)) || '…'
  END
  FROM (SELECT btrim(regexp_replace(coalesce(content, ''), '\s+', ' ', 'g')) AS t) s
$$;

CREATE TABLE IF NOT EXISTS conversations (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  title      text NOT NULL DEFAULT 'New conversation',
  -- true while the title is the placeholder: the first user message then names the conversation.
  title_auto boolean NOT NULL DEFAULT true,
  archived   boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- title (weight A) + message text (weight B), kept by the triggers below.
  search     tsvector NOT NULL DEFAULT ''::tsvector
);
CREATE INDEX IF NOT EXISTS conversations_by_activity ON conversations (user_id, archived, updated_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS conversations_search ON conversations USING gin (search);

CREATE TABLE IF NOT EXISTS messages (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  seq             bigserial NOT NULL UNIQUE,
  role            text NOT NULL CHECK (role IN ('user', 'assistant')),
  content         text NOT NULL DEFAULT '',
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  request_id      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (conversation_id, request_id)
);
CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages (conversation_id, seq DESC);

CREATE TABLE IF NOT EXISTS conversation_leases (
  conversation_id uuid PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
  holder          text NOT NULL,
  state           text NOT NULL CHECK (state IN ('streaming', 'awaiting_confirmation')),
  since           timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL
);

-- Message text indexed per conversation; capped so a huge answer cannot overflow a tsvector.
CREATE OR REPLACE FUNCTION airlock_message_tsv(content text) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT setweight(to_tsvector('english', left(coalesce(content, ''), 20000)), 'B')
$$;

CREATE OR REPLACE FUNCTION airlock_conversation_search(conv uuid, title text) RETURNS tsvector
  LANGUAGE sql STABLE AS $$
  SELECT setweight(to_tsvector('english', coalesce(title, '')), 'A') ||
         coalesce((SELECT airlock_message_tsv(string_agg(m.content, ' ' ORDER BY m.seq))
                   FROM messages m WHERE m.conversation_id = conv), ''::tsvector)
$$;

-- A new title (PATCH, derived) recomputes the search vector.
CREATE OR REPLACE FUNCTION airlock_conversations_title() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.search := setweight(to_tsvector('english', NEW.title), 'A');
  ELSIF NEW.title IS DISTINCT FROM OLD.title THEN
    NEW.search := airlock_conversation_search(NEW.id, NEW.title);
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS conversations_title ON conversations;
CREATE TRIGGER conversations_title BEFORE INSERT OR UPDATE OF title ON conversations
  FOR EACH ROW EXECUTE FUNCTION airlock_conversations_title();

-- A new message: activity time, the derived title (first user message), the search vector
-- (appended cheaply on insert, recomputed when a message's text changes).
CREATE OR REPLACE FUNCTION airlock_messages_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  derived text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    derived := CASE WHEN NEW.role = 'user' THEN airlock_derive_title(NEW.content) END;
    UPDATE conversations c SET
      updated_at = greatest(now(), c.updated_at),
      title      = CASE WHEN c.title_auto AND derived IS NOT NULL THEN derived ELSE c.title END,
      title_auto = c.title_auto AND derived IS NULL,
      search     = CASE WHEN c.title_auto AND derived IS NOT NULL THEN c.search  -- title trigger recomputes
                        ELSE c.search || airlock_message_tsv(NEW.content) END
    WHERE c.id = NEW.conversation_id;
  ELSIF NEW.content IS DISTINCT FROM OLD.content THEN
    UPDATE conversations c SET search = airlock_conversation_search(c.id, c.title)
    WHERE c.id = NEW.conversation_id;
  END IF;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS messages_changed ON messages;
CREATE TRIGGER messages_changed AFTER INSERT OR UPDATE OF content ON messages
  FOR EACH ROW EXECUTE FUNCTION airlock_messages_changed();
