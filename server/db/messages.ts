/**
 * The messages table: a conversation's transcript in `seq` order (bigserial, so order is stable
 * even when two rows share a created_at). Appending is idempotent by a client `request_id`.
 * Inserting a message also touches the conversation, derives its title from the first user
 * message and extends its search vector (trigger in 004_conversations.sql).
 * @module
 */
import { AirlockError } from '../errors.ts';
import { isUuid } from './conversations.ts';
import type { Queryable } from './pool.ts';
import { storableJson, storableText } from './storable.ts';
import type { BranchPath } from '../../src/lib/wire/branches.ts';

export type MessageRole = 'user' | 'assistant';

export interface Message {
  id: string;
  conversationId: string;
  /** Position in the whole table; only its order matters. A string: bigint. */
  seq: string;
  role: MessageRole;
  content: string;
  metadata: Record<string, unknown>;
  requestId: string | null;
  createdAt: Date;
  /** The branch it was written on (issue 29; migration 181). */
  branch: number;
}

interface MessageRow {
  id: string;
  conversation_id: string;
  seq: string;
  role: MessageRole;
  content: string;
  metadata: Record<string, unknown>;
  request_id: string | null;
  created_at: Date;
  branch: number;
}

const COLUMNS = 'm.id, m.conversation_id, m.seq, m.role, m.content, m.metadata, m.request_id, m.created_at, m.branch';

function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    seq: String(row.seq),
    role: row.role,
    content: row.content,
    metadata: row.metadata,
    requestId: row.request_id,
    createdAt: row.created_at,
    branch: row.branch,
  };
}

export interface AppendMessageInput {
  conversationId: string;
  role: MessageRole;
  content: string;
  metadata?: Record<string, unknown>;
  /** Idempotency: the same request_id with the same payload returns the stored message. */
  requestId?: string | null;
  /** The branch it is written on (issue 29); default: the conversation's active branch. */
  branch?: number;
}

/**
 * Appends a message and returns the row. With `requestId`: a repeat with the same role, content
 * and metadata returns the first message (no second row); a different payload throws
 * AirlockError CONFLICT. Concurrent duplicates are safe (unique index + ON CONFLICT). An unknown
 * conversation throws AirlockError NOT_FOUND. A NUL in content or metadata (model or tool text)
 * is stored as U+FFFD (storable.ts).
 * @example await appendMessage(pool, { conversationId, role: 'assistant', content: '', metadata: { type: 'tool', tool_call_id } });
 */
export async function appendMessage(q: Queryable, input: AppendMessageInput): Promise<Message> {
  const metadata = storableJson(input.metadata ?? {});
  const params = [input.conversationId, input.role, storableText(input.content), metadata, input.requestId ?? null, input.branch ?? null];
  if (!isUuid(input.conversationId)) throw new AirlockError('NOT_FOUND', 'No such conversation.');
  let rows: MessageRow[];
  try {
    ({ rows } = await q.query<MessageRow>(
      `INSERT INTO messages AS m (conversation_id, role, content, metadata, request_id, branch)
       VALUES ($1, $2, $3, $4::jsonb, $5, coalesce($6::int, (SELECT active_branch FROM conversations WHERE id = $1::uuid), 0))
       ON CONFLICT (conversation_id, request_id) DO NOTHING
       RETURNING ${COLUMNS}`,
      params,
    ));
  } catch (error) {
    // foreign_key_violation: the conversation does not exist (or was just deleted).
    if ((error as { code?: string }).code === '23503') throw new AirlockError('NOT_FOUND', 'No such conversation.', { cause: error });
    throw error;
  }
  if (rows[0]) return toMessage(rows[0]);
  // Only a request_id conflict gets here: compare with the stored message.
  const existing = await q.query<MessageRow & { same: boolean }>(
    `SELECT ${COLUMNS}, (m.role = $2 AND m.content = $3 AND m.metadata = $4::jsonb) AS same
     FROM messages m WHERE m.conversation_id = $1 AND m.request_id = $5`,
    params.slice(0, 5),
  );
  const row = existing.rows[0];
  if (!row) throw new AirlockError('INTERNAL', 'A message insert conflicted but no row was found.');
  if (!row.same) {
    throw new AirlockError('CONFLICT', 'This request_id was already used with a different message.', {
      details: { request_id: input.requestId },
    });
  }
  return toMessage(row);
}

/**
 * Updates a message's content and/or metadata. `metadata` replaces it; `metadataPatch` merges
 * top-level keys into it (jsonb `||`), e.g. a tool card's `{status: 'done', output}`. NUL is
 * stored as U+FFFD, as by appendMessage. Returns the updated row, or null when there is no such message.
 */
export async function updateMessage(
  q: Queryable,
  input: { id: string; content?: string; metadata?: Record<string, unknown>; metadataPatch?: Record<string, unknown> },
): Promise<Message | null> {
  if (!isUuid(input.id)) return null;
  const { rows } = await q.query<MessageRow>(
    `UPDATE messages m SET
       content  = coalesce($2, m.content),
       metadata = coalesce($3::jsonb, m.metadata) || coalesce($4::jsonb, '{}'::jsonb)
     WHERE m.id = $1 RETURNING ${COLUMNS}`,
    [
      input.id,
      input.content == null ? null : storableText(input.content),
      input.metadata === undefined ? null : storableJson(input.metadata),
      input.metadataPatch === undefined ? null : storableJson(input.metadataPatch),
    ],
  );
  return rows[0] ? toMessage(rows[0]) : null;
}

/**
 * Merges `metadataPatch` into the newest message of a conversation whose `metadata[key]` equals
 * `value` (compared as text), e.g. `{ key: 'approval_id', value }` for a card written by an earlier
 * run: found and updated in one round trip. Null when there is no such message.
 */
export async function patchNewestByMetadata(
  q: Queryable,
  input: { conversationId: string; key: string; value: string; metadataPatch: Record<string, unknown> },
): Promise<Message | null> {
  if (!isUuid(input.conversationId)) return null;
  const { rows } = await q.query<MessageRow>(
    `UPDATE messages m SET metadata = m.metadata || $4::jsonb
     WHERE m.id = (SELECT id FROM messages WHERE conversation_id = $1 AND metadata ->> $2 = $3 ORDER BY seq DESC LIMIT 1)
     RETURNING ${COLUMNS}`,
    [input.conversationId, input.key, input.value, storableJson(input.metadataPatch)],
  );
  return rows[0] ? toMessage(rows[0]) : null;
}

/** One message by id, or null. */
export async function getMessage(q: Queryable, id: string): Promise<Message | null> {
  if (!isUuid(id)) return null;
  const { rows } = await q.query<MessageRow>(`SELECT ${COLUMNS} FROM messages m WHERE m.id = $1`, [id]);
  return rows[0] ? toMessage(rows[0]) : null;
}

export interface MessagePage {
  /** Oldest first. */
  items: Message[];
  /** Pass as `beforeSeq` for the next (older) page; null when this page reaches the start. */
  nextBeforeSeq: string | null;
}

/** A row is on the branch path (parameters: its branches, the seq each one's rows stop at, null: all). */
const onPathSql = (branches: string, uptos: string) =>
  `EXISTS (SELECT 1 FROM unnest(${branches}::int[], ${uptos}::bigint[]) AS p(branch, upto) WHERE m.branch = p.branch AND (p.upto IS NULL OR m.seq < p.upto))`;

/** The path as SQL arrays; none: branch 0 (every conversation before its first fork). */
export function pathParams(path: BranchPath = [{ branch: 0, upto: null }]): { branches: number[]; uptos: Array<string | null> } {
  return { branches: path.map((p) => p.branch), uptos: path.map((p) => (p.upto === null ? null : String(p.upto))) };
}

/** The rows of a branch path, oldest first (a fork finds the message it starts from among them). */
export async function listPathMessages(q: Queryable, conversationId: string, path: BranchPath): Promise<Message[]> {
  const { branches, uptos } = pathParams(path);
  const { rows } = await q.query<MessageRow>(
    `SELECT ${COLUMNS} FROM messages m WHERE m.conversation_id = $1 AND ${onPathSql('$2', '$3')} ORDER BY m.seq`,
    [conversationId, branches, uptos],
  );
  return rows.map(toMessage);
}

/**
 * A page of a conversation's messages ending just before `beforeSeq` (or at the newest), oldest
 * first within the page. Keyset on seq: messages appended meanwhile never shift older pages.
 */
export async function listMessages(
  q: Queryable,
  input: { conversationId: string; beforeSeq?: string | null; limit: number; path?: BranchPath },
): Promise<MessagePage> {
  const { branches, uptos } = pathParams(input.path);
  const { rows } = await q.query<MessageRow>(
    `SELECT ${COLUMNS} FROM messages m
     WHERE m.conversation_id = $1 AND ($2::bigint IS NULL OR m.seq < $2::bigint) AND ${onPathSql('$4', '$5')}
     ORDER BY m.seq DESC LIMIT $3`,
    [input.conversationId, input.beforeSeq ?? null, input.limit + 1, branches, uptos],
  );
  const page = rows.slice(0, input.limit).reverse();
  const nextBeforeSeq = rows.length > input.limit && page[0] ? String(page[0].seq) : null;
  return { items: page.map(toMessage), nextBeforeSeq };
}

/** Whether any stored message names this upload (`metadata.files[].path`); the retention sweep keeps those. */
export async function isFileReferenced(db: Queryable, path: string): Promise<boolean> {
  const { rows } = await db.query<{ found: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM messages WHERE metadata -> 'files' @> $1::jsonb) AS found`,
    [JSON.stringify([{ path }])],
  );
  return rows[0].found;
}
