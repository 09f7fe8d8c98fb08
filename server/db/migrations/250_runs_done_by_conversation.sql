-- The turn's end asks whether another run of its conversation already ended done (the first
-- answer's title, db/conversations.ts setFirstAnswerTitle). runs had no index led by
-- conversation_id, so that NOT EXISTS was a sequential scan of every run of every conversation,
-- inside every turn's end commit: its cost grew with each turn the database had seen (5.4 ms of
-- database CPU at 20,000 runs), which is what collapsed `npm run bench -- capacity` (issue 38).
-- Partial: only done runs are asked about.
CREATE INDEX IF NOT EXISTS runs_done_by_conversation ON runs (conversation_id) WHERE status = 'done';
