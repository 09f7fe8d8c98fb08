-- The hash-chained audit (issue 28 item 1). Each new audit_log row carries its tenant, the hash of
-- the tenant's previous row (prev_hash) and its own hash (server/audit/chain.ts: SHA-256 over the
-- canonical JSON of a fixed column list plus prev_hash), written by the app in the row's own
-- transaction while it holds the tenant's head row (audit_chain_heads, FOR UPDATE), so concurrent
-- writers on every replica append one after the other. Rows written before this migration stay
-- unhashed: the genesis is the last of them, and each tenant's first chained row has
-- prev_hash = 'genesis:<last id>'. The table lock makes that id exact: a writer that already drew an
-- id commits (or not) before it is read.
LOCK TABLE audit_log IN SHARE ROW EXCLUSIVE MODE;
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS tenant text;
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS prev_hash text;
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS hash text;

CREATE TABLE IF NOT EXISTS audit_chain_genesis (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  last_id  bigint NOT NULL
);
INSERT INTO audit_chain_genesis (last_id) SELECT coalesce(max(id), 0) FROM audit_log ON CONFLICT DO NOTHING;

-- One row per tenant: the chain's head (its newest row), the row every append locks.
CREATE TABLE IF NOT EXISTS audit_chain_heads (
  tenant  text PRIMARY KEY,
  last_id bigint,
  hash    text NOT NULL
);
