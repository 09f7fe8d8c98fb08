-- Titles without bidi controls (issue 30, finding 16): embeddings, overrides and isolates
-- (U+202A–U+202E, U+2066–U+2069), the marks U+200E, U+200F and U+061C can make a title read as
-- something else wherever it is listed. A derived title is stripped of them before whitespace is
-- collapsed and the 60-character cut, the same set as stripBidiControls (server/db/conversations.ts,
-- which strips given titles), and the titles already stored are cleaned.
CREATE OR REPLACE FUNCTION airlock_derive_title(content text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN t = '' THEN NULL
    WHEN char_length(t) <= 60 THEN t
    ELSE rtrim(left(t, 59)) || '…'
  END
  FROM (
    SELECT btrim(regexp_replace(
      regexp_replace(coalesce(content, ''), '[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]', '', 'g'),
      '\s+', ' ', 'g')) AS t
  ) s
$$;

UPDATE conversations
   SET title = coalesce(nullif(btrim(regexp_replace(title, '[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]', '', 'g')), ''), 'New conversation')
 WHERE title ~ '[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]';
