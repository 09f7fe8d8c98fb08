/**
 * Normalises the /chat call shapes into one input. The data slots follow the endpoint's
 * parameters (message, conversation_id, action, text, files, request_id, approval_id, arguments, grant,
 * message_id); the ADR's three-argument shape puts
 * the conversation id and action in `event_data` instead, so those are the fallback.
 * @module
 */
import { z } from 'zod';

import { EditedArgumentsSchema, GrantRequestSchema } from '../../src/lib/wire/chat-metadata.ts';
import type { FileRef, TurnAction, TurnInput } from '../engine/types.ts';

export type { FileRef };

/** The engine's normalized turn input. */
export type ChatInput = TurnInput;

export class ChatInputError extends Error {
  override readonly name = 'ChatInputError';
}

const FileSchema = z
  .union([
    z.string().min(1).transform((path) => ({ path })),
    z.looseObject({ path: z.string().min(1), orig_name: z.string().nullish(), size: z.number().nullish(), mime_type: z.string().nullish(), url: z.string().nullish() }),
  ])
  .transform((f): FileRef => {
    const ref: FileRef = { path: f.path };
    if ('orig_name' in f && f.orig_name) ref.orig_name = f.orig_name.split(/[\\/]/).pop();
    if ('size' in f && typeof f.size === 'number') ref.size = f.size;
    if ('mime_type' in f && f.mime_type) ref.mime_type = f.mime_type;
    if ('url' in f && f.url) ref.url = f.url;
    return ref;
  });

const FilesSchema = z.array(FileSchema).max(10, 'at most 10 files per message');
const MessageObjectSchema = z.looseObject({ text: z.string('message.text must be a string').nullish(), files: z.unknown().optional() });
const IdSchema = z.uuid('conversation_id must be a conversation id (a UUID) or "new"');
const RequestIdSchema = z
  .string('request_id must be a string')
  .trim()
  .min(1)
  .max(200, 'request_id must be at most 200 characters')
  .refine((id) => !id.includes('\u0000'), 'must not contain the NUL character');
const ApprovalIdSchema = z.uuid('approval_id must be an approval id (a UUID)');
const MessageIdSchema = z.uuid('message_id must be a message id (a UUID)');
const ActionSchema = z.enum(['confirm', 'deny', 'regenerate', 'edit'], 'action must be "confirm", "deny", "regenerate", "edit" or empty');

const blank = (v: unknown) => v === null || v === undefined || v === '';

/** The `conversation_id` that starts a new conversation within a Gradio session (session-continuity.ts). */
export const NEW_CONVERSATION = 'new';

/** Whether the call asks for a new conversation (`conversation_id: "new"`) rather than the session's. */
export function asksNewConversation(data: readonly unknown[], eventData: unknown): boolean {
  const extra = Array.isArray(eventData) ? eventData : [];
  return pick(data[1], extra[0]) === NEW_CONVERSATION;
}

function pick(slot: unknown, fallback: unknown): unknown {
  return blank(slot) ? (blank(fallback) ? null : fallback) : slot;
}

/** A JSON parameter may come as JSON text (a Gradio textbox, curl) or already parsed (the JS client). */
function jsonSlot(value: unknown, field: string): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new ChatInputError(`${field}: must be JSON`);
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new ChatInputError(`${field}: ${result.error.issues[0]?.message ?? 'invalid'}`);
  return result.data;
}

/** The longest deny reason, as v1's `reason`. */
const MAX_DENY_REASON = 2000;

/** Turns the endpoint's data slots and the join's event_data into a ChatInput, or throws ChatInputError. */
export function normalizeChatInput(data: readonly unknown[], eventData: unknown): ChatInput {
  const [message, conversationSlot, actionSlot, textSlot, filesSlot, requestSlot, approvalSlot, argumentsSlot, grantSlot, messageSlot] = data;
  const extra = Array.isArray(eventData) ? eventData : [];

  let text = '';
  let files: FileRef[] = [];
  if (!blank(message)) {
    if (typeof message === 'string') text = message;
    else {
      if (typeof message !== 'object' || Array.isArray(message)) throw new ChatInputError('message: expected a string or {text, files}');
      const parsed = parse(MessageObjectSchema, message, 'message');
      text = parsed.text ?? '';
      if (!blank(parsed.files)) files = parse(FilesSchema, parsed.files, 'files');
    }
  }
  // The ADR's `submit("/chat", {text, files}, [...])` arrives in the text/files slots.
  if (!text && typeof textSlot === 'string') text = textSlot;
  if (files.length === 0 && !blank(filesSlot)) files = parse(FilesSchema, filesSlot, 'files');

  // PostgreSQL text cannot hold U+0000, and the conversation is created before the run's error
  // path: refuse it here, as a validation error, rather than as the database's.
  if (text.includes('\u0000')) throw new ChatInputError('message: must not contain the NUL character');
  if (files.some((f) => Object.values(f).some((v) => typeof v === 'string' && v.includes('\u0000')))) {
    throw new ChatInputError('files: must not contain the NUL character');
  }

  const conversationId = pick(conversationSlot, extra[0]);
  const action = pick(actionSlot, extra[1]);
  // A grant goes with a confirm only ("Allow for 1 hour"); `text` is never read as one.
  if (!blank(grantSlot) && action !== 'confirm') throw new ChatInputError('grant: only with action "confirm"');
  // With a deny, the `text` parameter (not the message) is the approver's reason (issue 27 item 4).
  const denyReason = action === 'deny' && typeof textSlot === 'string' ? textSlot.trim() : '';
  if (denyReason.length > MAX_DENY_REASON) throw new ChatInputError(`text: a deny reason must be at most ${MAX_DENY_REASON} characters`);
  return {
    text: text.trim(),
    files,
    conversationId: conversationId === null || conversationId === NEW_CONVERSATION ? null : parse(IdSchema, conversationId, 'conversation_id'),
    action: action === null ? null : parse(ActionSchema, action, 'action'),
    requestId: blank(requestSlot) ? null : parse(RequestIdSchema, requestSlot, 'request_id'),
    approvalId: blank(approvalSlot) ? null : parse(ApprovalIdSchema, approvalSlot, 'approval_id'),
    // Told to the model as v1's `reason` is.
    ...(denyReason ? { decisionNote: denyReason } : {}),
    // The decision's extras (issue 27) and a branch's start (issue 29): present only when sent.
    ...(blank(argumentsSlot) ? {} : { editedArgs: parse(EditedArgumentsSchema, jsonSlot(argumentsSlot, 'arguments'), 'arguments') }),
    ...(blank(grantSlot) ? {} : { grant: parse(GrantRequestSchema, jsonSlot(grantSlot, 'grant'), 'grant') }),
    ...(blank(messageSlot) ? {} : { messageId: parse(MessageIdSchema, messageSlot, 'message_id') }),
  };
}
