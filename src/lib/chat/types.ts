/**
 * Shapes the UI reads: the `/chat` stream messages and stored transcript (CONTRACTS §4), the REST
 * bodies (CONTRACTS §2) and the items the chat pane renders.
 * @module
 */

/** A file the gateway has stored (what the Gradio upload returns, as sent in `message.files`). */
export interface FileRef {
  path: string;
  orig_name?: string;
  size?: number;
  mime_type?: string;
  url?: string;
  meta?: { _type: 'gradio.FileData' };
  /** What the assistant got of it (set by the gateway: the `attachments` event and the stored message). */
  status?: 'read' | 'truncated' | 'not_seen' | 'not_read' | 'failed';
  /** Why it was cut or not read, for the user. */
  note?: string;
}

/** One `/chat` yield: `{role, content, metadata: {type, ...}}` (ARCHITECTURE's table). */
export interface WireChatMessage {
  role: 'assistant' | 'user';
  content: unknown;
  metadata?: Record<string, unknown> & { type?: string };
}

/** A stored message (`GET /api/assistant/history`). */
export interface StoredMessage {
  id: string;
  conversation_id: string;
  role: 'user' | 'assistant';
  content: string;
  metadata: Record<string, unknown> | null;
  created_at: string;
}

export interface Conversation {
  id: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  archived: boolean;
}

export interface User {
  id: string;
  username: string;
  role: 'viewer' | 'operator' | 'admin' | string;
}

export interface ActiveState {
  active: boolean;
  state: 'streaming' | 'awaiting_confirmation' | 'idle';
  since: string | null;
  holder?: string;
}

export type ToolStatus = 'running' | 'done' | 'error';
export type ApprovalStatus = 'pending' | 'confirmed' | 'denied' | 'expired';

export interface UserItem {
  kind: 'user';
  id: string;
  text: string;
  files: FileRef[];
}
export interface AnswerItem {
  kind: 'answer';
  id: string;
  text: string;
  streaming: boolean;
  cancelled?: boolean;
}
export interface ToolItem {
  kind: 'tool';
  id: string;
  /** The call's tool_call_id, when the item's id is another (a card from history). */
  callId?: string;
  tool: string;
  input: unknown;
  status: ToolStatus;
  output?: unknown;
  error?: string;
  durationMs?: number;
}
export interface ApprovalItem {
  kind: 'approval';
  id: string;
  tool: string;
  input: unknown;
  prompt: string;
  expiresAt: string | null;
  timeoutS: number | null;
  status: ApprovalStatus;
  /**
   * Why it was decided, in v1's words (`user_confirmed`, `user_denied`, `approval_timeout`,
   * `superseded_by_new_message`), when the server or this tab knows it.
   */
  reason?: string;
  /**
   * A decision was sent and its answer has not come back yet; `supersede`: a new message was
   * sent, which the server takes as a denial of every pending approval.
   */
  deciding?: 'confirm' | 'deny' | 'supersede';
}
export interface ErrorItem {
  kind: 'error';
  id: string;
  code: string;
  /** The gateway's own words about it, for people (shown under the sentence). */
  detail: string;
  /** A technical message (a transport library's), shown only in the card's details. */
  diagnostic?: string;
  retryable: boolean;
}

/** Everything the message list can show. */
export type ChatItem = UserItem | AnswerItem | ToolItem | ApprovalItem | ErrorItem;

/** idle: the composer is free; streaming: a run is in progress; awaiting_confirmation: paused on an approval. */
export type ChatPhase = 'idle' | 'streaming' | 'awaiting_confirmation';
