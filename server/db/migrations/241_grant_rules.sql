-- A grant keeps the rule it was made under (issue 36 item 2). `rule_hash`: the canonical hash of the
-- deciding rule entry and its scope path (policy/rule-identity.ts); a grant covers a later call only
-- when that call's deciding rule has the same hash, so a changed policy retires it. Grants made
-- before this migration have none and cover nothing any more (make them again). `approvers`: the
-- approver terms of that rule ({required, roles, users, distinctFromRequester}), for the record.
-- An approval that offers a grant keeps the rule it would be made under (`grant_rule` {hash, scoped}).
ALTER TABLE approval_grants ADD COLUMN IF NOT EXISTS rule_hash text;
ALTER TABLE approval_grants ADD COLUMN IF NOT EXISTS approvers jsonb CHECK (approvers IS NULL OR jsonb_typeof(approvers) = 'object');
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS grant_rule jsonb CHECK (grant_rule IS NULL OR jsonb_typeof(grant_rule) = 'object');
