/**
 * The real @gradio/client against a running Airlock: log in, connect to /chat, collect a turn
 * (each message checked against the wire module's schema).
 */
import { Client } from '@gradio/client';
import { isDeepStrictEqual } from 'node:util';
import { WireMessageSchema } from '../../src/lib/wire/chat-metadata.ts';

export const DEMO_PASSWORD = 'demo-password-1';

export interface WireMessage {
  role: string;
  content: string;
  metadata: Record<string, unknown> & { type: string; conversation_id: string };
}

export interface Turn {
  messages: WireMessage[];
  types: string[];
  final: WireMessage | undefined;
  status: string;
  errorMessage?: string;
}

export async function login(baseUrl: string, username: string, password = DEMO_PASSWORD): Promise<string> {
  const res = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  if (res.status !== 200) throw new Error(`login ${username}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** The gateway's service token (client credentials of the test config, tests/helpers/server.ts). */
export async function serviceToken(baseUrl: string, clientSecret = 'test-service-secret-0123456789'): Promise<string> {
  const res = await fetch(`${baseUrl}/api/auth/service-token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: 'airlock-gateway', client_secret: clientSecret }),
  });
  if (res.status !== 200) throw new Error(`service token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

export function connectChat(baseUrl: string, token: string): Promise<Client> {
  return Client.connect(`${baseUrl}/api/agent/gradio`, {
    headers: { Authorization: `Bearer ${token}` },
    events: ['data', 'status'],
  });
}

type Submission = ReturnType<Client['submit']>;

/** Iterates a submission to its end; `onMessage` may act mid-stream (cancel, a second client…). */
export async function collect(submission: Submission, onMessage?: (m: WireMessage, index: number) => void | Promise<void>): Promise<Turn> {
  const messages: WireMessage[] = [];
  let status = 'pending';
  let errorMessage: string | undefined;
  for await (const event of submission) {
    if (event.type === 'data') {
      // The client applies diffs to the same object in place: copy each value as it arrives.
      const message = structuredClone((event.data as unknown[])[0]) as WireMessage;
      // Every message the server emits is one the wire module declares (strictly: no stray field).
      const declared = WireMessageSchema.safeParse(message);
      if (!declared.success) throw new Error(`/chat sent a message src/lib/wire does not declare: ${JSON.stringify(message)}: ${declared.error.message}`);
      // process_completed repeats the last value; keep each yield once (its keys may come in
      // another order than the diffs built them in: compared as values, not as JSON text)
      if (messages.length && isDeepStrictEqual(messages.at(-1), message)) continue;
      messages.push(message);
      await onMessage?.(message, messages.length - 1);
    } else if (event.type === 'status') {
      status = event.stage;
      if (event.stage === 'error') errorMessage = typeof event.message === 'string' ? event.message : JSON.stringify(event.message);
    }
  }
  return { messages, types: messages.map((m) => m.metadata.type), final: messages.at(-1), status, errorMessage };
}

/** One /chat turn; no `conversationId` starts a new conversation ("new"), as our UI does, not the session's last. */
export function chat(client: Client, text: string, conversationId: string | null = null, action: 'confirm' | 'deny' | null = null): Submission {
  return client.submit('/chat', { message: { text, files: [] }, conversation_id: conversationId ?? 'new', action: action ?? '' });
}
