-- Branches of a conversation (issue 29 item 2): Edit and Regenerate fork the LangGraph thread from
-- the checkpoint before a message and keep the old branch. The thread stays one (the checkpoints
-- are LangGraph's own store); what the app keeps is which rows belong to which branch:
-- - messages.branch: the branch a row was written on. Existing rows are branch 0.
-- - conversation_branches: each fork's parent and where it left it. A branch's transcript is its
--   parent's rows before `from_message_seq` (recursively), then its own rows. `from_seq` is the
--   same point in the ledger (conversation_events.seq; branch.forked carries it).
--   `head_checkpoint`: where the thread stood on this branch when it was last left (a new fork:
--   the checkpoint it starts from), so that a switch back puts the thread there again (a run from
--   that checkpoint id: LangGraph's fork).
-- - conversations.active_branch: the branch the conversation shows and continues (branch.switched);
--   thread_branch: the branch the thread's newest checkpoint belongs to (the next turn moves the
--   thread to active_branch first when they differ).
ALTER TABLE messages ADD COLUMN IF NOT EXISTS branch integer NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS active_branch integer NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS thread_branch integer NOT NULL DEFAULT 0;

CREATE TABLE IF NOT EXISTS conversation_branches (
  conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  branch integer NOT NULL CHECK (branch >= 0),
  parent_branch integer,
  from_seq bigint,
  from_message_seq bigint,
  head_checkpoint text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, branch)
);
