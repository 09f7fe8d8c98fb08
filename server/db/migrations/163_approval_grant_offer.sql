-- Approve with a grant (issue 27 item 2): what an approval offers besides Confirm, fixed when it
-- opens from the deciding rule (`grant_offer` {max_ttl_s, match}: the longest grant its rule allows
-- and the default match; NULL: not grantable), and the grant its approval made (`grant_id`).
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS grant_offer jsonb CHECK (grant_offer IS NULL OR jsonb_typeof(grant_offer) = 'object');
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS grant_id uuid REFERENCES approval_grants(id);
