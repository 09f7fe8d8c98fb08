-- Process liveness (issue 23 item 7): a process's pulse is its own database session. Each
-- gateway process registers the backend of one dedicated connection; when the process dies, its
-- backend goes with it, so its leases are free at once instead of after the lease TTL (which stays
-- as the backstop for a process that hangs with its connection open).
CREATE TABLE IF NOT EXISTS processes (
  owner         text PRIMARY KEY,     -- the engine's owner of runs (host:pid:random)
  pid           integer NOT NULL,     -- the OS process id, for people reading the table
  epoch         integer NOT NULL,     -- bumped each time the process re-registers after losing its connection
  backend_pid   integer NOT NULL,
  backend_start timestamptz NOT NULL,
  heartbeat_at  timestamptz NOT NULL DEFAULT now()
);

-- The run owner that took the lease (null for holders that are not runs of a registered process).
ALTER TABLE conversation_leases ADD COLUMN IF NOT EXISTS owner text;
