/**
 * Shapes the UI reads: the `/chat` stream messages and stored transcript (CONTRACTS §4, from the
 * wire module), the REST bodies (CONTRACTS §2) and the items the chat pane renders.
 * @module
 */

import type { ErrorField, FileRef, SnippetPart, StoredMessage, WireMessage } from '../wire/index.ts';

/** A stored file and a history message: the wire module's, shared with the server. */
export type { FileRef, StoredMessage };

/** One `/chat` yield: `{role, content, metadata: {type, ...}}` (ARCHITECTURE's table). */
export type WireChatMessage = WireMessage;

export interface Conversation {
  id: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  archived: boolean;
  /** In search results: where the words were found, marked (src/lib/wire/search-snippet.ts). */
  snippet?: SnippetPart[] | null;
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

/**
 * The stored message an item shows (issue 29): what Edit and Regenerate name (`message_id`) and
 * where a branch switch goes (`seq`). Set from history; a live item learns them when its run ends.
 */
export interface StoredRef {
  messageId?: string;
  seq?: number;
}
export type ApprovalStatus = 'pending' | 'confirmed' | 'denied' | 'expired';

export interface UserItem extends StoredRef {
  kind: 'user';
  id: string;
  text: string;
  files: FileRef[];
}
export interface AnswerItem extends StoredRef {
  kind: 'answer';
  id: string;
  text: string;
  streaming: boolean;
  cancelled?: boolean;
}
export interface ToolItem extends StoredRef {
  kind: 'tool';
  id: string;
  /** The call's tool_call_id, when the item's id is another (a card from history). */
  callId?: string;
  tool: string;
  input: unknown;
  status: ToolStatus;
  output?: unknown;
  error?: string;
  /** The user's role may not run this tool: the card says "Not allowed for your role". */
  refused?: boolean;
  durationMs?: number;
  /** It ran under a standing grant, without a card (issue 27): "allowed by grant G, by X, until T". */
  grant?: { id: string; by: string; until: string };
}
export interface ApprovalItem extends StoredRef {
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
  /** The effect's preview (issue 27); null: the tool has none; absent on older cards. */
  preview?: { summary: string; details?: Record<string, unknown> } | null;
  /** Human labels of the arguments. */
  labels?: Record<string, string>;
  /** The approval this one replaces: approved, but the state changed before it ran. */
  replaces?: string;
  /** Several approvers (issue 26): how many it needs, and who approved so far (usernames). */
  approvalsRequired?: number;
  approvedBy?: string[];
  /** What approving may also grant ("Allow for 1 hour"); null or absent: not grantable. */
  grantable?: { maxTtlS: number; match: Record<string, unknown> } | null;
  /** Confirmed with the user's passkey (issue 28 step-up), through the approvals API. */
  stepUp?: boolean;
  /** Why the server refused the arguments of its last edited confirm, by path (the card places them by its fields). */
  fieldErrors?: ErrorField[];
  /** Who decided it (a username), when the server said (issue 37 item 3). */
  decidedBy?: string;
  /** Confirmed with the arguments edited: what was proposed and what ran (issue 37 item 3). */
  edited?: { from: Record<string, unknown>; to: Record<string, unknown> };
  /** The standing grant the confirm also made (issue 37 item 6): the resolved card says what it covers and until when. */
  /** Who may approve, when it needs several (issue 37 item 4). */
  approvers?: { roles: string[]; users: string[] };
  grantMade?: { match: Record<string, unknown>; ttlS: number; until: string };
}
export interface ErrorItem extends StoredRef {
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
