/**
 * RunAgentInput -> the engine's turns. The conversation lives in the ledger, so only the LAST
 * user message of `messages` is the new turn; a `resume` array instead decides approvals, one
 * engine turn per entry (the /chat confirm path: per approval_id, exactly once).
 *
 *   resume {status: resolved, payload: {approved: true}}            -> confirm
 *   resume {status: resolved, payload: {approved: false, reason?}}  -> deny
 *   resume {status: cancelled}                                      -> deny
 *
 * The AG-UI runId is the engine's request_id (of the last turn): a retry of the same run replays
 * it, and a reconnect finds it. Pure; the zod schema is AG-UI's own, narrowed where we need more.
 * @module
 */
import { contentHasMedia, contentToText } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { z } from 'zod';
import type { TurnInput } from '../engine/index.ts';
import { AirlockError } from '../errors.ts';

/** The AG-UI run route (routes.ts); also the origin of a resume's decisions in their audit rows. */
export const AG_UI_PATH = '/api/agent/ag-ui';

export const AgUiRunInput = RunAgentInputSchema.extend({
  threadId: z.uuid('threadId must be a conversation id (a UUID)'),
  runId: z.string('runId must be a string').trim().min(1, 'runId must not be empty').max(180, 'runId must be at most 180 characters'),
});
export type AgUiRunInput = z.infer<typeof AgUiRunInput>;

const ApprovalAnswer = z.strictObject({ approved: z.boolean('payload.approved must be true or false'), reason: z.string().max(1000).optional() });
const InterruptId = z.uuid('interruptId must be an interrupt id from this thread (a UUID)');

const invalid = (message: string) => new AirlockError('VALIDATION_ERROR', message);

export interface Decision {
  approvalId: string;
  action: 'confirm' | 'deny';
  /** The entry asked to go ahead (resolved), as opposed to cancelling the interrupt. */
  resolved: boolean;
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
    if (!answer.success) throw invalid(`resume[${i}].payload: expected {"approved": true} or {"approved": false, "reason": "…"}`);
    return { approvalId: id.data, action: answer.data.approved ? 'confirm' : 'deny', resolved: true };
  });
}

/** The text of the last user message; throws VALIDATION_ERROR when there is none or it has media. */
export function lastUserText(messages: AgUiRunInput['messages']): string {
  const last = messages.findLast((m) => m.role === 'user');
  if (!last || last.role !== 'user') throw invalid('messages: a user message (or a resume array) is required');
  if (contentHasMedia(last.content)) throw invalid('messages: only text content is accepted here (upload files through /chat)');
  const text = contentToText(last.content).trim();
  if (!text) throw invalid('messages: the last user message is empty');
  return text;
}

/**
 * The engine turns of one AG-UI run: one new message, or one decision per resume entry. Each
 * turn's request_id derives from the runId, the last one being the runId itself.
 */
export function turnsOf(input: AgUiRunInput): { turns: TurnInput[]; decisions: Decision[] } {
  // origin: a resume's decisions (or a message superseding them) are audited as made here.
  const base = { files: [], conversationId: input.threadId, origin: { method: 'POST', path: AG_UI_PATH } };
  if (input.resume && input.resume.length > 0) {
    const decisions = decisionsOf(input.resume);
    const turns = decisions.map((d, i): TurnInput => ({
      ...base,
      text: '',
      action: d.action,
      approvalId: d.approvalId,
      requestId: i === decisions.length - 1 ? input.runId : `${input.runId}#${i + 1}`,
    }));
    return { turns, decisions };
  }
  return { turns: [{ ...base, text: lastUserText(input.messages), action: null, approvalId: null, requestId: input.runId }], decisions: [] };
}

/** `Last-Event-ID`: absent (a new run or a retry) or a ledger seq; anything else is a 400. */
export function lastEventId(header: string | string[] | undefined): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return null;
  if (!/^\d{1,15}$/.test(value.trim())) throw new AirlockError('VALIDATION_ERROR', 'Last-Event-ID must be an event id this stream sent.');
  return Number(value.trim());
}
