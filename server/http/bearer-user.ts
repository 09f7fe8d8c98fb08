/**
 * The event routes' caller: the user token in `Authorization: Bearer`, and a conversation that
 * is theirs (another user's is 404, as everywhere).
 * @module
 */
import type { FastifyRequest } from 'fastify';
import { authErrorDetails, bearerToken, isAuthError } from '../auth/index.ts';
import { getConversationForUser } from '../db/conversations.ts';
import type { Pool } from '../db/index.ts';
import { AirlockError } from '../errors.ts';

export type VerifyUser = (token: string) => Promise<{ userId: string }>;

/** The user of the bearer token (and the token, which the agent's tools forward), or UNAUTHORIZED. */
export async function bearerUser(request: FastifyRequest, verifyUser: VerifyUser): Promise<{ userId: string; token: string }> {
  const token = bearerToken(request.headers.authorization);
  if (!token) throw new AirlockError('UNAUTHORIZED', 'A valid user token is required.');
  try {
    return { userId: (await verifyUser(token)).userId, token };
  } catch (error) {
    if (!isAuthError(error)) throw error;
    const disabled = authErrorDetails(error);
    throw new AirlockError('UNAUTHORIZED', disabled ? 'This account has been disabled.' : 'A valid user token is required.', { details: disabled, cause: error });
  }
}

export async function ownConversation(request: FastifyRequest, deps: { pool: Pool; verifyUser: VerifyUser }, conversationId: string): Promise<string> {
  const { userId } = await bearerUser(request, deps.verifyUser);
  const conversation = await getConversationForUser(deps.pool, { userId, id: conversationId });
  if (!conversation) throw new AirlockError('NOT_FOUND', 'No such conversation.');
  return userId;
}
