-- Edit, then approve (issue 27 item 1). `args` and `action_hash` stay what the model proposed: they
-- bind the paused interrupt. An approver's edit is kept beside them: the arguments the tool will run
-- with and their action hash (tool + final arguments + requester). The resume runs `final_args` only
-- while their hash still equals `final_action_hash`; NULL: not edited.
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS final_args jsonb;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS final_action_hash text;
