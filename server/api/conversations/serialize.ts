/** Conversations and messages -> wire JSON (CONTRACTS §2). */
import type { Conversation } from '../../db/conversations.ts';
import type { Message } from '../../db/messages.ts';

export const conversationJson = (c: Conversation) => ({
  id: c.id,
  title: c.title,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
  archived: c.archived,
  ...(c.snippet === undefined ? {} : { snippet: c.snippet }),
});

export const messageJson = (m: Message) => ({
  id: m.id,
  conversation_id: m.conversationId,
  role: m.role,
  content: m.content,
  metadata: m.metadata,
  created_at: m.createdAt,
  /** Issue 29: its place (the position `from_message_seq` of a fork counts in) and its branch. */
  seq: Number(m.seq),
  branch: m.branch,
});
