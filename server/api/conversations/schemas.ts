/** Request schemas of /api/assistant (conversations, history, messages). */
import { z } from 'zod';
import { stripBidiControls } from '../../db/conversations.ts';
import { isBigintText, isRealText, isValidTimestamp } from '../scalars.ts';

export const ConversationParams = z.object({ id: z.uuid({ message: 'must be a conversation id' }) });

/** A title: bidi controls stripped (issue 30, finding 16), then trimmed; something must be left. */
const title = z.string().overwrite(stripBidiControls).trim().min(1).max(200);

/**
 * `title`: the user's own (the model's title never replaces it). `text`: the first message, from
 * which the title is derived until the first answer names the conversation (the UI sends this).
 */
export const CreateConversationBody = z.object({ title: title.optional(), text: z.string().max(100_000).optional() }).default({});

export const RenameConversationBody = z.object({ title });

export const ListConversationsQuery = z.object({
  q: z.string().trim().max(200).optional(),
  cursor: z.string().max(500).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  archived: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
});

export const ConversationCursor = z.object({
  u: z.string().max(64).refine(isValidTimestamp),
  i: z.uuid(),
  r: z.string().max(32).refine(isRealText).optional(),
});

export const HistoryQuery = z.object({
  conversation_id: z.uuid({ message: 'must be a conversation id' }),
  before: z.string().max(100).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** A branch to read (issue 29); absent: the conversation's active branch. */
  branch: z.coerce.number().int().min(0).max(2_147_483_647).optional(),
});

export const HistoryCursor = z.object({ s: z.string().refine(isBigintText) });

export const AppendMessageBody = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.string().max(200_000),
  metadata: z.record(z.string(), z.unknown()).default({}),
  request_id: z.string().trim().min(1).max(200).optional(),
});

/** `GET /conversations/:id/export?format=md|json` (issue 29 item 4). */
export const ExportQuery = z.object({
  format: z.enum(['md', 'json']).default('md'),
  /** The branch to export (issue 37 item 8); absent: the conversation's active branch. */
  branch: z.coerce.number().int().min(0).max(2_147_483_647).optional(),
});
