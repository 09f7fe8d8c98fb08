-- Approvals bound to the one action they showed, and "decided" kept apart from "resumed":
--   action_hash: hash of tool + canonical arguments + requesting user; the resume refuses an
--                interrupt whose action does not hash the same (NULL on rows from before this).
--   resumed_at:  when the graph consumed the decision. A decided row without it is a confirmed or
--                denied action whose run has not continued yet (a crash between the two): the next
--                start or the next confirm resumes it.
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS action_hash text;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS resumed_at timestamptz;
UPDATE approvals SET resumed_at = resolved_at WHERE status <> 'pending' AND resumed_at IS NULL;

CREATE INDEX IF NOT EXISTS approvals_decided_not_resumed
  ON approvals (thread_id) WHERE status <> 'pending' AND resumed_at IS NULL;
