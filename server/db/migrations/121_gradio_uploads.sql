-- Uploads shared by gateway replicas (issue 14, server/gradio/pg-upload-store.ts): the bytes of
-- each upload, keyed by its owner folder and client path `<id>/<basename>`.
CREATE TABLE IF NOT EXISTS gradio_uploads (
  owner_folder text NOT NULL,
  path         text NOT NULL,
  bytes        bytea NOT NULL,
  size         bigint NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner_folder, path)
);
CREATE INDEX IF NOT EXISTS gradio_uploads_by_age ON gradio_uploads (created_at);
