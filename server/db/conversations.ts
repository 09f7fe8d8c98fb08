/**
 * The conversations table: one row per chat, owned by one user. The title is derived from the
 * first user message (trigger in 004_conversations.sql) until it is set explicitly, then replaced
 * after the first answer (the rule's title, then a real model's) unless the user gave one
 * (`title_by_user`); `search` is a tsvector over the title and the messages' text, kept by triggers.
 * @module
 */
import { AirlockError } from '../errors.ts';
import { isUniqueViolation, type Queryable } from './pool.ts';
import { HIT_END, HIT_START, snippetParts, type SnippetPart } from '../../src/lib/wire/search-snippet.ts';

export interface Conversation {
  id: string;
  userId: string;
  title: string;
  archived: boolean;
  createdAt: Date;
  updatedAt: Date;
  /** In a search's results only: where the words were found, the found words marked (search-snippet.ts). */
  snippet?: SnippetPart[] | null;
}

interface ConversationRow {
  id: string;
  user_id: string;
  title: string;
  archived: boolean;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'c.id, c.user_id, c.title, c.archived, c.created_at, c.updated_at';

function toConversation(row: ConversationRow): Conversation {
  return {
    id: row.id,
    userId: row.user_id,
    title: row.title,
    archived: row.archived,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a string PostgreSQL accepts as a uuid (so lookups of junk ids answer "not found"). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * Bidirectional controls (embeddings, overrides, isolates, marks): U+202A–U+202E, U+2066–U+2069,
 * U+200E, U+200F, U+061C. In a title they can make it read as something else in every list that
 * shows it (issue 30, finding 16), so every title, given or derived, is stored without them; the
 * SQL airlock_derive_title (migration 190) strips the same set.
 */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g;

/** `text` without bidi controls. @example stripBidiControls('a\u202Eb') // 'ab' */
export function stripBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS, '');
}

/**
 * Creates a conversation for a user. `title` wins; else a title derived from `text` (the first
 * message, whitespace collapsed, at most 60 characters); else the placeholder "New conversation",
 * which the first user message appended later replaces. With `id`, an id already taken (by
 * anyone) throws AirlockError CONFLICT.
 * @example const conv = await createConversation(pool, { userId, text: 'Deploy checkout to staging' });
 */
export async function createConversation(
  q: Queryable,
  input: { userId: string; title?: string | null; text?: string | null; id?: string },
): Promise<Conversation> {
  try {
    const { rows } = await q.query<ConversationRow>(
      `WITH t AS (SELECT coalesce(nullif(btrim($2), ''), airlock_derive_title($3)) AS title)
       INSERT INTO conversations AS c (id, user_id, title, title_auto, title_by_user)
       SELECT coalesce($4::uuid, gen_random_uuid()), $1, coalesce(t.title, 'New conversation'), t.title IS NULL, nullif(btrim($2), '') IS NOT NULL FROM t
       RETURNING ${COLUMNS}`,
      [input.userId, input.title == null ? null : stripBidiControls(input.title), input.text ?? null, input.id ?? null],
    );
    return toConversation(rows[0]);
  } catch (error) {
    if (isUniqueViolation(error)) throw new AirlockError('CONFLICT', 'A conversation with this id already exists.', { cause: error });
    throw error;
  }
}

/**
 * The conversation when it exists AND belongs to `userId` (archived ones included), else null.
 * Another user's conversation is null, exactly like a missing one.
 */
export async function getConversationForUser(
  q: Queryable,
  input: { id: string; userId: string },
): Promise<Conversation | null> {
  if (!isUuid(input.id)) return null;
  const { rows } = await q.query<ConversationRow>(
    `SELECT ${COLUMNS} FROM conversations c WHERE c.id = $1 AND c.user_id = $2`,
    [input.id, input.userId],
  );
  return rows[0] ? toConversation(rows[0]) : null;
}

/** Marks activity now (appending a message does this already, by trigger). */
export async function touchConversation(q: Queryable, id: string): Promise<void> {
  await q.query('UPDATE conversations SET updated_at = greatest(now(), updated_at) WHERE id = $1', [id]);
}

/**
 * Sets an explicit title (no longer replaced by a derived one), without bidi controls. Null when
 * not the user's; VALIDATION_ERROR when nothing is left of the title.
 */
export async function renameConversation(
  q: Queryable,
  input: { id: string; userId: string; title: string },
): Promise<Conversation | null> {
  if (!isUuid(input.id)) return null;
  const title = stripBidiControls(input.title).trim();
  if (!title) throw new AirlockError('VALIDATION_ERROR', 'The title is empty.');
  const { rows } = await q.query<ConversationRow>(
    `UPDATE conversations c SET title = $3, title_auto = false, title_by_user = true, updated_at = greatest(now(), updated_at)
     WHERE c.id = $1 AND c.user_id = $2 RETURNING ${COLUMNS}`,
    [input.id, input.userId, title],
  );
  return rows[0] ? toConversation(rows[0]) : null;
}

/**
 * The one guard of every automatic title: it is written only while the user never gave one (a
 * rename, or a title at creation: `title_by_user`, migration 180), so it never overwrites theirs;
 * `also` is the writer's own condition ($3 on). Without bidi controls. True when the row qualified
 * (its title may have been this one already).
 */
async function writeAutoTitle(q: Queryable, id: string, title: string, also: string, params: unknown[]): Promise<boolean> {
  const clean = storedTitle(title);
  if (!clean) return false;
  const { rowCount } = await q.query(
    `UPDATE conversations c SET title = $2, title_auto = false WHERE c.id = $1 AND NOT c.title_by_user AND ${also}`,
    [id, clean, ...params],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * The rule's title after the conversation's first completed answer (run `runId` ends done): written
 * only while no other run here has ended done, and never over the user's (writeAutoTitle). True
 * when this was the first answer of a conversation the user had not titled.
 */
export function setFirstAnswerTitle(q: Queryable, input: { id: string; runId: string; title: string }): Promise<boolean> {
  const firstDone = `NOT EXISTS (SELECT 1 FROM runs r WHERE r.conversation_id = c.id AND r.status = 'done' AND r.id <> $3::uuid)`;
  return writeAutoTitle(q, input.id, input.title, firstDone, [input.runId]);
}

/**
 * A real model's title (engine/first-title.ts), over `replacing`, the automatic title written at
 * the first answer: only while the conversation still has that one, so a rename made while the
 * model was asked stays (and never over the user's, writeAutoTitle). True when written.
 */
export function replaceAutoTitle(q: Queryable, input: { id: string; replacing: string; title: string }): Promise<boolean> {
  return writeAutoTitle(q, input.id, input.title, 'c.title = $3', [storedTitle(input.replacing)]);
}

/** A title as it is stored: without bidi controls, trimmed. */
function storedTitle(title: string): string {
  return stripBidiControls(title).trim();
}

/** The first user message's text in a conversation, '' when there is none. */
export async function firstUserMessage(q: Queryable, id: string): Promise<string> {
  const { rows } = await q.query<{ content: string }>(
    `SELECT content FROM messages WHERE conversation_id = $1 AND role = 'user' ORDER BY seq LIMIT 1`,
    [id],
  );
  return rows[0]?.content ?? '';
}

/** Archives (soft delete) or restores. Null when not the user's. */
export async function setConversationArchived(
  q: Queryable,
  input: { id: string; userId: string; archived: boolean },
): Promise<Conversation | null> {
  if (!isUuid(input.id)) return null;
  const { rows } = await q.query<ConversationRow>(
    `UPDATE conversations c SET archived = $3 WHERE c.id = $1 AND c.user_id = $2 RETURNING ${COLUMNS}`,
    [input.id, input.userId, input.archived],
  );
  return rows[0] ? toConversation(rows[0]) : null;
}

/** Keyset position in a listing: exact text forms, so no precision is lost on the way back. */
export interface ConversationCursor {
  updatedAt: string;
  id: string;
  /** Present when the listing was a search (ordered by rank first). */
  rank?: string;
}

export interface ConversationPage {
  items: Conversation[];
  next: ConversationCursor | null;
}

/**
 * A user's conversations, newest activity first (search: best match first), keyset-paged so rows
 * inserted meanwhile never shift or repeat later pages.
 */
export async function listConversations(
  q: Queryable,
  input: { userId: string; archived: boolean; query?: string; after?: ConversationCursor | null; limit: number },
): Promise<ConversationPage> {
  const search = input.query?.trim() ? input.query.trim() : null;
  const params: unknown[] = [input.userId, input.archived, input.limit + 1];
  let rankExpr = 'NULL::real';
  let snippetExpr = 'NULL::text';
  const where = ['c.user_id = $1', 'c.archived = $2'];
  if (search) {
    params.push(search);
    const tsq = `websearch_to_tsquery('english', $${params.length})`;
    where.push(`c.search @@ ${tsq}`);
    rankExpr = `ts_rank(c.search, ${tsq})`;
    snippetExpr = snippetSql(tsq, params);
  }
  const after = input.after;
  if (after) {
    params.push(after.updatedAt, after.id);
    const [u, i] = [`$${params.length - 1}::timestamptz`, `$${params.length}::uuid`];
    if (search && after.rank !== undefined) {
      params.push(after.rank);
      const r = `$${params.length}::real`;
      where.push(`(${rankExpr} < ${r} OR (${rankExpr} = ${r} AND (c.updated_at, c.id) < (${u}, ${i})))`);
    } else {
      where.push(`(c.updated_at, c.id) < (${u}, ${i})`);
    }
  }
  const order = search ? 'rank DESC, c.updated_at DESC, c.id DESC' : 'c.updated_at DESC, c.id DESC';
  const { rows } = await q.query<ConversationRow & { rank: string | null; updated_at_key: string; snippet: string | null }>(
    `SELECT ${COLUMNS}, (${rankExpr})::text AS rank, c.updated_at::text AS updated_at_key, ${snippetExpr} AS snippet
     FROM conversations c WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT $3`,
    params,
  );
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  const next =
    rows.length > input.limit && last
      ? { updatedAt: last.updated_at_key, id: last.id, ...(search && last.rank !== null ? { rank: last.rank } : {}) }
      : null;
  const items = page.map((row) => (search ? { ...toConversation(row), snippet: row.snippet === null ? null : snippetParts(row.snippet) } : toConversation(row)));
  return { items, next };
}

/**
 * A search result's snippet (issue 29 item 3): PostgreSQL's ts_headline over the newest message
 * that matches (the title when only the title does), the found words between two private-use
 * characters that the text itself is stripped of, so no message can fake a mark. Evaluated for the
 * page's rows only (LIMIT applies first to the ranked scan, then the select list).
 */
function snippetSql(tsq: string, params: unknown[]): string {
  params.push(HIT_START, HIT_END);
  const [start, end] = [`$${params.length - 1}::text`, `$${params.length}::text`];
  const clean = (text: string) => `replace(replace(${text}, ${start}, ''), ${end}, '')`;
  const newestMatch = `(SELECT left(m.content, 20000) FROM messages m
      WHERE m.conversation_id = c.id AND to_tsvector('english', left(m.content, 20000)) @@ ${tsq}
      ORDER BY m.seq DESC LIMIT 1)`;
  const options = `'StartSel=' || ${start} || ', StopSel=' || ${end} || ', MaxWords=16, MinWords=6, MaxFragments=1, FragmentDelimiter=" … "'`;
  return `ts_headline('english', ${clean(`coalesce(${newestMatch}, c.title)`)}, ${tsq}, ${options})`;
}
