/**
 * Who is chatting: the user JWT from the Gradio request's `Authorization: Bearer` header (or
 * `X-HF-Authorization`, where the Python client puts its `token=`), verified like every user token
 * (signature, claims, revocation, the user's current row). Missing or invalid: null, which the
 * Gradio server answers with 401. A verifier that could not decide (the database is down) is not
 * "invalid": that becomes a 503 SERVICE_UNAVAILABLE, so clients keep the session and retry.
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import { bearerToken, isAuthError } from '../auth/index.ts';
import { isDatabaseUnavailable } from '../db/index.ts';
import { ERROR_CODES } from '../errors.ts';
import { ServiceUnavailableError } from '../gradio/index.ts';

export interface ChatIdentity {
  userId: string;
  username: string;
  role: string;
  /** The raw token, forwarded to the backend API as X-User-JWT by the agent's tools. */
  token: string;
}

/** The owner key the Gradio server binds sessions, events and uploads to: the user id. */
export const chatOwnerKey = (identity: ChatIdentity): string => identity.userId;

export type UserTokenVerifier = (token: string) => Promise<{ userId: string; username: string; role: string }>;

export function createChatAuthenticator(verify: UserTokenVerifier) {
  return async (headers: IncomingHttpHeaders): Promise<ChatIdentity | null> => {
    const token = bearerToken(headers.authorization) ?? bearerToken(headers['x-hf-authorization']);
    if (!token) return null;
    try {
      const user = await verify(token);
      return { userId: user.userId, username: user.username, role: user.role, token };
    } catch (error) {
      if (isAuthError(error)) return null;
      throw unavailable(error);
    }
  };
}

/**
 * The 503 body carries the taxonomy code next to Gradio's `detail`, as REST errors do. Any
 * failure to check is a 503 here (Gradio clients read every 401 as "drop the credentials").
 */
function unavailable(error: unknown): ServiceUnavailableError {
  const message = isDatabaseUnavailable(error) ? ERROR_CODES.SERVICE_UNAVAILABLE.message : 'Sign-in could not be checked. Try again shortly.';
  return new ServiceUnavailableError(message, {
    code: 'SERVICE_UNAVAILABLE',
    extra: { error: { code: 'SERVICE_UNAVAILABLE', message, retryable: true } },
    cause: error,
  });
}
