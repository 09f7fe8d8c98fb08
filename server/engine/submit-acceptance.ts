/**
 * Whether a submit is accepted, before anything runs: is the input acceptable, and does an
 * earlier run with the same request_id make it a replay or a conflict.
 * @module
 */
import { hashJson } from '../canonical-json.ts';
import { AirlockError } from '../errors.ts';
import type { FileStorage, TurnInput } from './types.ts';

/** Throws VALIDATION_ERROR for an input no run should start from; returns where each file is stored. */
export async function checkTurnInput(input: TurnInput, files: FileStorage, userId: string): Promise<string[]> {
  // Only the caller's own uploads resolve: another user's path is as unknown as a made-up one.
  const found = await Promise.all(input.files.map((f) => files.resolve(f.path, userId)));
  const foreign = input.files.find((_, i) => !found[i]);
  if (foreign) throw new AirlockError('VALIDATION_ERROR', `The file ${foreign.orig_name ?? foreign.path} was not uploaded here; upload it first.`);
  const forks = input.action === 'edit' || input.action === 'regenerate';
  if ((!input.action || input.action === 'edit') && !input.text && input.files.length === 0) throw new AirlockError('VALIDATION_ERROR', 'The message is empty.');
  // Issue 29: a fork names the message it starts from; nothing else carries a message_id.
  if (forks !== Boolean(input.messageId)) throw new AirlockError('VALIDATION_ERROR', forks ? `message_id: required with action "${input.action}".` : 'message_id: only with action "edit" or "regenerate".');
  if (forks && !input.conversationId) throw new AirlockError('VALIDATION_ERROR', 'conversation_id: an edit or a regenerate continues a conversation.');
  // Edited arguments say what a confirm runs (issue 27 item 1): a deny or a message runs nothing of them.
  if (input.editedArgs && input.action !== 'confirm') throw new AirlockError('VALIDATION_ERROR', 'arguments go with action "confirm" only: a denial runs nothing.');
  return found as string[];
}

/** What makes two submits "the same request": key order and the request id itself do not matter. */
export function requestHash(input: TurnInput): string {
  // `arguments` and `message_id` only when sent (undefined drops out), so the hash of every other request is unchanged.
  return hashJson({ text: input.text, files: input.files.map((f) => f.path), conversation_id: input.conversationId, action: input.action, approval_id: input.approvalId, arguments: input.editedArgs ?? undefined, message_id: input.messageId ?? undefined });
}

/** Same request_id: the same payload replays that run; another payload is a CONFLICT. */
export function replayDecision({ storedHash, hash }: { storedHash: string; hash: string }): 'replay' | 'conflict' {
  return storedHash === hash ? 'replay' : 'conflict';
}

export const requestConflict = () =>
  new AirlockError('CONFLICT', 'This request_id was already used for a different message; use a new request_id for a new message.');
