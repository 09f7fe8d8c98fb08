/**
 * Who calls, and whose thread it is. The caller is the user token in `Authorization: Bearer` (as
 * on every /api/agent route); the AG-UI threadId is the conversation id. An unknown threadId
 * becomes a new conversation of the caller's; another user's is 404, exactly like a missing one
 * (the id's existence is not revealed, and it cannot be taken over).
 * @module
 */
import type { FastifyRequest } from 'fastify';
import type { Interrupt } from '@ag-ui/core';
import { bearerToken, isAuthError } from '../auth/index.ts';
import { listPendingApprovals } from '../db/approvals.ts';
import { createConversation, getConversationForUser } from '../db/conversations.ts';
import type { Pool } from '../db/index.ts';
import type { TurnUser } from '../engine/index.ts';
import { AirlockError, isAirlockError } from '../errors.ts';
import { toInterrupt } from './projection.ts';

export type VerifyUser = (token: string) => Promise<{ userId: string }>;

export async function callerOf(request: FastifyRequest, verifyUser: VerifyUser): Promise<TurnUser> {
  const token = bearerToken(request.headers.authorization);
  if (!token) throw new AirlockError('UNAUTHORIZED', 'A valid user token is required.');
  try {
    return { userId: (await verifyUser(token)).userId, token };
  } catch (error) {
    if (!isAuthError(error)) throw error;
    throw new AirlockError('UNAUTHORIZED', 'A valid user token is required.', { cause: error });
  }
}

const notFound = () => new AirlockError('NOT_FOUND', 'No such thread.');

/** The caller's thread; created with this id when `create` and nobody has it; else 404. */
export async function ownThread(pool: Pool, input: { userId: string; threadId: string; create?: { text: string } }): Promise<void> {
  if (await getConversationForUser(pool, { userId: input.userId, id: input.threadId })) return;
  if (!input.create) throw notFound();
  try {
    await createConversation(pool, { userId: input.userId, id: input.threadId, text: input.create.text });
  } catch (error) {
    if (!isAirlockError(error) || error.code !== 'CONFLICT') throw error;
    // Taken meanwhile: by this caller (a concurrent first run) it is theirs; else it is not.
    if (!(await getConversationForUser(pool, { userId: input.userId, id: input.threadId }))) throw notFound();
  }
}

/** The approvals of the thread still waiting for a decision, as Interrupts. */
export async function pendingInterrupts(pool: Pool, conversationId: string): Promise<Interrupt[]> {
  return (await listPendingApprovals(pool, conversationId)).map((a) =>
    toInterrupt({
      run_id: '',
      approval_id: a.id,
      tool_call_id: a.toolCallId,
      tool: a.tool,
      input: a.args,
      prompt: a.prompt,
      expires_at: a.expiresAt.toISOString(),
      timeout_s: Math.max(1, Math.round((a.expiresAt.getTime() - a.createdAt.getTime()) / 1000)),
    }),
  );
}

/** The pending approval a resolved resume entry names, when it has expired (a stale resume). */
export async function expiredApproval(pool: Pool, conversationId: string, approvalIds: string[], now: Date): Promise<string | null> {
  const pending = await listPendingApprovals(pool, conversationId);
  return pending.find((a) => approvalIds.includes(a.id) && a.expiresAt.getTime() <= now.getTime())?.id ?? null;
}
