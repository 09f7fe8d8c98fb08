/**
 * Typed context for the signed-in app shell: session, REST client, connection, conversations, chat.
 * @module
 */
import { getContext, setContext } from 'svelte';
import type { Api } from './api.ts';
import type { ChatState } from './chat.svelte.ts';
import type { Connection } from './connection.svelte.ts';
import type { ConversationList } from './conversations.svelte.ts';
import type { TabGate } from './gate.svelte.ts';
import type { ServerClock } from './server-clock.ts';
import type { Session } from './session.svelte.ts';

export interface ChatContext {
  session: Session;
  api: Api;
  connection: Connection;
  conversations: ConversationList;
  chat: ChatState;
  gate: TabGate;
  /** The server's time (countdowns against the server's deadlines). */
  clock: ServerClock;
  offlineModel: () => boolean;
}

const KEY = Symbol('airlock.chat');

export function setChatContext(context: ChatContext): ChatContext {
  return setContext(KEY, context);
}

export function getChatContext(): ChatContext {
  const context = getContext<ChatContext | undefined>(KEY);
  if (!context) throw new Error('getChatContext() outside the chat layout');
  return context;
}
