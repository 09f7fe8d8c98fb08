/**
 * Who is chatting: the user JWT from the Gradio request's `Authorization: Bearer` header (or
 * `X-HF-Authorization`, where the Python client puts its `token=`), verified like every user token
 * (signature, claims, revocation). Missing or invalid: null, which the Gradio server answers with 401.
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import { bearerToken } from '../auth/index.ts';

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
    } catch {
      return null;
    }
  };
}
