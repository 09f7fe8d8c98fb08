-- The upload retention sweep asks whether any message still names a file (metadata.files[].path);
-- this index answers that containment query without scanning the transcript.
CREATE INDEX IF NOT EXISTS messages_by_file_ref ON messages USING gin ((metadata -> 'files') jsonb_path_ops);
