-- Mailboxes of long-lived streams held by one replica (the MCP legacy `/sse` sessions,
-- server/gradio/bus/pg-bus.ts): a message posted on any replica is relayed by NOTIFY to the one
-- holding the stream. One row per open stream; a dead replica's rows go with its sweep.
CREATE TABLE IF NOT EXISTS gradio_bus_mailboxes (
  key        text PRIMARY KEY,
  owner_key  text,
  replica    text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS gradio_bus_mailboxes_by_replica ON gradio_bus_mailboxes (replica);
