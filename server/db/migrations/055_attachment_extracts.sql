-- Text extracted from attached files (PDFs), once per content: keyed by the SHA-256 of the bytes, so
-- the same file attached again, by anyone, on any gateway replica, is not parsed again. A failed
-- parse is kept too (error set, text NULL), so a broken file is not re-parsed on every turn.
-- Only the text is stored, never the file; budgets are applied per turn, after the lookup.
CREATE TABLE IF NOT EXISTS attachment_extracts (
  content_hash text PRIMARY KEY CHECK (content_hash ~ '^[0-9a-f]{64}$'),
  kind         text NOT NULL,
  text         text,
  pages        integer,
  error        text,
  extracted_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((text IS NULL) <> (error IS NULL))
);
