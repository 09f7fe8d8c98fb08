-- The session bus shared by gateway replicas (issue 14, server/gradio/bus/pg-bus.ts). Frames
-- travel in NOTIFY payloads; these tables hold only what must outlive a notification.

-- One row per replica: its LISTEN connection's backend, so others notice when it dies.
CREATE TABLE IF NOT EXISTS gradio_bus_replicas (
  replica       text PRIMARY KEY,
  backend_pid   integer NOT NULL,
  backend_start timestamptz NOT NULL
);

-- Joined events not yet completed: which session and owner they belong to, which replica runs them.
CREATE TABLE IF NOT EXISTS gradio_bus_events (
  event_id       text PRIMARY KEY,
  session_hash   text NOT NULL,
  owner_key      text,
  client_session text NOT NULL,
  replica        text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS gradio_bus_events_by_session ON gradio_bus_events (session_hash);
CREATE INDEX IF NOT EXISTS gradio_bus_events_by_replica ON gradio_bus_events (replica);

-- Frame batches too large for a NOTIFY payload (e.g. a completion carrying a long history).
CREATE TABLE IF NOT EXISTS gradio_bus_frames (
  id         bigserial PRIMARY KEY,
  body       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
