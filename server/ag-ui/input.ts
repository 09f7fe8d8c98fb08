/**
 * RunAgentInput -> the engine's turns. The conversation lives in the ledger, so only the LAST
 * user message of `messages` is the new turn; a `resume` array instead decides approvals, one
 * engine turn per entry (the /chat confirm path: per approval_id, exactly once).
 *
 *   resume {status: resolved, payload: {approved: true}}            -> confirm
 *   resume {status: resolved, payload: {approved: true, grant: {ttl_s, match?, scope?}}}
 *                                                                    -> confirm, and a standing grant (issue 27)
 *   resume {status: resolved, payload: {approved: true, editedArgs: {…}}} -> confirm with edited arguments (issue 27)
 *   resume {status: resolved, payload: {approved: false, reason?}}  -> deny (the reason is told to the model)
 *   resume {status: cancelled}                                      -> deny
 *
 * The AG-UI runId is the engine's request_id (of the last turn): a retry of the same run replays
 * it, and a reconnect finds it. The new message's own id is kept with its turn (user.message
 * `client_message_id`), so a reconnect's MESSAGES_SNAPSHOT names it as the client does. The
 * threadId is any string of 1-128 characters without control characters (threads.ts maps it to
 * a conversation). Pure; the zod schema is AG-UI's own, narrowed where we need more.
 * @module
 */
import { contentHasMedia, contentToText } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { z } from 'zod';
import type { TurnInput } from '../engine/index.ts';
import { AirlockError } from '../errors.ts';
import { EditedArgumentsSchema, GrantRequestSchema, type GrantRequest } from '../../src/lib/wire/chat-metadata.ts';

/** The AG-UI run route (routes.ts); also the origin of a resume's decisions in their audit rows. */
export const AG_UI_PATH = '/api/agent/ag-ui';

/** The longest threadId (and the longest client message id kept with a turn). */
export const THREAD_ID_MAX = 128;
export const CLIENT_MESSAGE_ID_MAX = 256;

export const AgUiRunInput = RunAgentInputSchema.extend({
  threadId: z
    .string('threadId must be a string')
    .min(1, 'threadId must not be empty')
    .max(THREAD_ID_MAX, `threadId must be at most ${THREAD_ID_MAX} characters`)
    .regex(/^[^\u0000-\u001f\u007f-\u009f]+$/, 'threadId must not contain control characters'),
  runId: z.string('runId must be a string').trim().min(1, 'runId must not be empty').max(180, 'runId must be at most 180 characters'),
});
export type AgUiRunInput = z.infer<typeof AgUiRunInput>;

const ApprovalAnswer = z.union([
  z.strictObject({ approved: z.literal(true), grant: GrantRequestSchema.optional(), editedArgs: EditedArgumentsSchema.optional() }),
  z.strictObject({ approved: z.literal(false), reason: z.string().max(1000).optional() }),
]);
const InterruptId = z.uuid('interruptId must be an interrupt id from this thread (a UUID)');

const invalid = (message: string) => new AirlockError('VALIDATION_ERROR', message);

export interface Decision {
  approvalId: string;
  action: 'confirm' | 'deny';
  /** The entry asked to go ahead (resolved), as opposed to cancelling the interrupt. */
  resolved: boolean;
  /** A deny's reason, told to the model. */
  note?: string;
  /** A confirm's standing grant. */
  grant?: GrantRequest;
  /** A confirm's arguments as the approver edited them. */
  editedArgs?: Record<string, unknown>;
}

/** The decisions of a `resume` array, in order; throws VALIDATION_ERROR for a malformed one. */
export function decisionsOf(resume: NonNullable<AgUiRunInput['resume']>): Decision[] {
  const seen = new Set<string>();
  return resume.map((entry, i) => {
    const id = InterruptId.safeParse(entry.interruptId);
    if (!id.success) throw invalid(`resume[${i}].interruptId: ${id.error.issues[0]?.message}`);
    if (seen.has(id.data)) throw invalid(`resume[${i}]: interrupt ${id.data} is answered twice`);
    seen.add(id.data);
    if (entry.status === 'cancelled') return { approvalId: id.data, action: 'deny', resolved: false };
    const answer = ApprovalAnswer.safeParse(entry.payload);
    if (!answer.success) throw invalid(`resume[${i}].payload: expected {"approved": true, "grant"?: {"ttl_s": …}, "editedArgs"?: {…}} or {"approved": false, "reason": "…"}`);
    const a = answer.data;
    if (a.approved) return { approvalId: id.data, action: 'confirm', resolved: true, ...(a.grant ? { grant: a.grant } : {}), ...(a.editedArgs ? { editedArgs: a.editedArgs } : {}) };
    return { approvalId: id.data, action: 'deny', resolved: true, ...(a.reason?.trim() ? { note: a.reason.trim() } : {}) };
  });
}

/** The last user message: its text and id; throws VALIDATION_ERROR when there is none, it has media or its id is too long. */
export function lastUserMessage(messages: AgUiRunInput['messages']): { text: string; clientMessageId: string | null } {
  const last = messages.findLast((m) => m.role === 'user');
  if (!last || last.role !== 'user') throw invalid('messages: a user message (or a resume array) is required');
  if (contentHasMedia(last.content)) throw invalid('messages: only text content is accepted here (upload files through /chat)');
  const text = contentToText(last.content).trim();
  if (!text) throw invalid('messages: the last user message is empty');
  if (last.id.length > CLIENT_MESSAGE_ID_MAX) throw invalid(`messages: a message id must be at most ${CLIENT_MESSAGE_ID_MAX} characters`);
  return { text, clientMessageId: last.id || null };
}

/** What one AG-UI run asks for, validated: one new message, or one decision per resume entry. */
export type RunRequest = { message: { text: string; clientMessageId: string | null }; decisions: [] } | { message: null; decisions: Decision[] };

/** Validates the run's input before anything is written; throws VALIDATION_ERROR. */
export function requestOf(input: AgUiRunInput): RunRequest {
  if (input.resume && input.resume.length > 0) return { message: null, decisions: decisionsOf(input.resume) };
  return { message: lastUserMessage(input.messages), decisions: [] };
}

/**
 * The engine turns of one AG-UI run in `conversationId` (threads.ts): one new message, or one
 * decision per resume entry. Each turn's request_id derives from the runId, the last one being the
 * runId itself.
 */
export function turnsOf(input: AgUiRunInput, request: RunRequest, conversationId: string): TurnInput[] {
  // origin: a resume's decisions (or a message superseding them) are audited as made here.
  const base = { files: [], conversationId, origin: { method: 'POST', path: AG_UI_PATH, channel: 'ag-ui' as const } };
  if (!request.message) {
    const { decisions } = request;
    return decisions.map((d, i): TurnInput => ({
      ...base,
      text: '',
      action: d.action,
      approvalId: d.approvalId,
      ...(d.note ? { decisionNote: d.note } : {}),
      ...(d.grant ? { grant: d.grant } : {}),
      ...(d.editedArgs ? { editedArgs: d.editedArgs } : {}),
      requestId: i === decisions.length - 1 ? input.runId : `${input.runId}#${i + 1}`,
    }));
  }
  const { text, clientMessageId } = request.message;
  return [{ ...base, text, clientMessageId, action: null, approvalId: null, requestId: input.runId }];
}

/** `Last-Event-ID`: absent (a new run or a retry) or a ledger seq; anything else is a 400. */
export function lastEventId(header: string | string[] | undefined): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return null;
  if (!/^\d{1,15}$/.test(value.trim())) throw new AirlockError('VALIDATION_ERROR', 'Last-Event-ID must be an event id this stream sent.');
  return Number(value.trim());
}
