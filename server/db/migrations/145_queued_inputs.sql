-- Queued input (issue 24 item 4, seed 001): a message sent while its conversation's agent runs is
-- kept here until its turn starts, in order, at most MAX_QUEUED_INPUTS per conversation. Replicas
-- share only PostgreSQL, so the queue is a table: its turn is claimed by deleting the row in the
-- transaction that takes the conversation lease and inserts the run row (id = run_id), so a queued
-- message starts exactly once whichever process (or recovery after a crash) claims it. Its
-- user.message (delivery "queue") and history row are written when the turn starts. Removing a
-- queued message (DELETE …/queue/{request_id}) deletes its row; a started one is a run.
CREATE TABLE IF NOT EXISTS queued_inputs (
  run_id          uuid PRIMARY KEY,
  seq             bigint GENERATED ALWAYS AS IDENTITY,
  conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  user_id         text NOT NULL,
  request_id      text NOT NULL,
  request_hash    text NOT NULL,
  -- The turn's input as the engine takes it (text, files, their stored paths, client_message_id):
  -- never a token; the turn gets one minted when it starts.
  input           jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (user_id, conversation_id, request_id)
);
CREATE INDEX IF NOT EXISTS queued_inputs_order ON queued_inputs (conversation_id, seq);
