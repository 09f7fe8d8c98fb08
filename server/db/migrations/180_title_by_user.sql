-- Who wrote the title (issue 29, item 3). The model names a conversation after its first answer
-- (server/engine/first-title.ts), but "the model's title never overwrites a user's rename", and
-- title_auto cannot tell: the first message's derived title clears it just as a rename does. So a
-- title the user gave (a rename, or an explicit title at creation) is marked here. The rows
-- before this column count as the user's when their title is not the one derived from their first
-- message.
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS title_by_user boolean NOT NULL DEFAULT false;

UPDATE conversations c SET title_by_user = true
 WHERE NOT c.title_auto
   AND c.title IS DISTINCT FROM (
     SELECT airlock_derive_title(m.content) FROM messages m
      WHERE m.conversation_id = c.id AND m.role = 'user' ORDER BY m.seq LIMIT 1);
