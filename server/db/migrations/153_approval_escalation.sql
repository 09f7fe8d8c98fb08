-- Escalation (issue 26 item 5): when an approval with escalate_after_s is still pending that long
-- after it opened, one approval.escalated notification goes out; escalated_at makes it once.
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS escalated_at timestamptz;
