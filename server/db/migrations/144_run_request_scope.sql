-- Issue 24 item 4 (seed 001: "the uniqueness scope is the session"): a run's request_id is unique
-- per (user, conversation, request_id), so the same key in two conversations is two submits and a
-- retry never finds another conversation's run. A submit naming no conversation creates one: its
-- retry is looked up among the runs that created their conversation (opened_conversation), of
-- which (user, request_id) has at most one, so two concurrent first submits still make one.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS opened_conversation boolean NOT NULL DEFAULT false;
-- Existing rows: each conversation's first run is taken as the one that created it.
UPDATE runs r SET opened_conversation = true
 WHERE NOT r.opened_conversation
   AND r.started_at = (SELECT min(f.started_at) FROM runs f WHERE f.conversation_id = r.conversation_id)
   AND NOT EXISTS (SELECT 1 FROM runs d WHERE d.conversation_id = r.conversation_id AND d.started_at = r.started_at AND d.id < r.id);
ALTER TABLE runs DROP CONSTRAINT IF EXISTS runs_user_id_request_id_key;
CREATE UNIQUE INDEX IF NOT EXISTS runs_request_per_conversation ON runs (user_id, conversation_id, request_id);
CREATE UNIQUE INDEX IF NOT EXISTS runs_request_opening ON runs (user_id, request_id) WHERE opened_conversation;
