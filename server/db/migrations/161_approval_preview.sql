-- What an approval card shows besides the arguments (issue 27 items 3 and 4): the effect's preview
-- ({summary, details?, state_hash}; null: the tool has none), the arguments' human labels, and,
-- when the state changed after an approval of the same tool call, the approval this one replaces
-- (that one is closed as denied / state_changed).
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS preview jsonb;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS labels jsonb;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS replaces uuid REFERENCES approvals (id);
