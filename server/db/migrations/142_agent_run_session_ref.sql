-- Issue 24 (seed 000): a headless run's session_id is the caller's opaque string (1-128 characters
-- of [A-Za-z0-9._:-]). A UUID is a conversation id as before; any other string is the caller's
-- alias of a conversation (conversation_aliases, keyed by user and string, shared with AG-UI's
-- threadId), and the run keeps the caller's string so that every answer echoes it.
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS session_ref text;
