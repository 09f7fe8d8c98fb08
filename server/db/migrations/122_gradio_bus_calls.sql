-- Curl call-API events waiting for their GET (server/gradio/bus/pg-bus.ts): the POST and the GET
-- may land on different replicas. One row per call, deleted by its one reader or once expired.
CREATE TABLE IF NOT EXISTS gradio_bus_calls (
  event_id     text PRIMARY KEY,
  api_name     text NOT NULL,
  session_hash text NOT NULL,
  owner_key    text,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS gradio_bus_calls_by_expiry ON gradio_bus_calls (expires_at);
