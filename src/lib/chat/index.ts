/** The chat state and transport, by name. */
export { createApi, type Api, type LoginResult, type Page } from './api.ts';
export { ChatState, type ChatStateOptions } from './chat.svelte.ts';
export { Connection, type ConnectionStatus } from './connection.svelte.ts';
export { getChatContext, setChatContext, type ChatContext } from './context.ts';
export { ConversationList } from './conversations.svelte.ts';
export { ApiError, errorText, isApiError, isRetryable } from './errors.ts';
export { TabGate, isHeldElsewhere } from './gate.svelte.ts';
export { itemsFromHistory } from './history.ts';
export { renderMarkdown } from './markdown.ts';
export { applyChatEvent, initialView, type ChatEvent, type ChatView } from './reducer.ts';
export { Session, safeNext } from './session.svelte.ts';
export { connectGradio, type ChatRun, type ChatTransport, type SubmitInput, type TransportEvent } from './transport.ts';
export type * from './types.ts';
