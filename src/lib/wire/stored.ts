/**
 * The stored transcript as `GET /api/assistant/history` returns it (CONTRACTS §4,
 * "Persisted messages"): the same events as /chat, kept as cards, so a reloaded conversation renders
 * like a live one. Written by the engine's transcript (server/engine/transcript.ts). Types only.
 * @module
 */
import type { ApprovalReason, ArgumentLabels, EffectPreview, FileRef, GrantOffer, Replaces } from './chat-metadata.ts';

/** A user's message: the files it carried, with what the model got of each. */
export interface StoredUserMetadata {
  files?: FileRef[];
}

/** A tool call's card, `running` until its result patches it. */
export interface StoredToolMetadata {
  type: 'tool';
  tool: string;
  input: unknown;
  tool_call_id: string;
  status: 'running' | 'done' | 'error';
  output?: unknown;
  error?: string;
  code?: string;
  duration_ms?: number;
  /** The standing grant it ran under, without a card (issue 27). */
  grant_id?: string;
  grant_by?: string;
  grant_until?: string;
}

/** An approval's card, `pending` until its decision patches it (with `reason` once recorded). */
export interface StoredApprovalMetadata {
  type: 'approval';
  approval_id: string;
  tool: string;
  input: Record<string, unknown>;
  prompt: string;
  expires_at: string;
  timeout_s: number;
  status: 'pending' | 'confirmed' | 'denied' | 'expired';
  reason?: ApprovalReason;
  /** Issue 27: the effect's preview (null: none), the arguments' labels, the approval it replaces; absent on older cards. */
  preview?: EffectPreview | null;
  labels?: ArgumentLabels;
  replaces?: Replaces;
  /** What approving may also grant (issue 27); null: not grantable; absent on older cards. */
  grantable?: GrantOffer | null;
  /** Issue 26, M-of-N (more than one approver): how many it needs and who approved so far, patched by each partial approval. */
  approvals_required?: number;
  approved_by?: string[];
  /** Issue 28: approving needs the approver's passkey. */
  step_up?: 'passkey';
}

/** An answer segment: stopped (`cancelled`) or ended by a failure (`error`). */
export interface StoredAnswerMetadata {
  type: 'answer';
  cancelled?: true;
  error?: { code: string; detail: string };
}

interface StoredBase {
  id: string;
  conversation_id: string;
  content: string;
  created_at: string;
  /** Its place in the conversation (a fork's `from_message_seq` counts in it) and its branch (issue 29). */
  seq: number;
  branch: number;
}

/** One message of a history page. */
export type StoredMessage =
  | (StoredBase & { role: 'user'; metadata: StoredUserMetadata | null })
  | (StoredBase & { role: 'assistant'; metadata: StoredToolMetadata | StoredApprovalMetadata | StoredAnswerMetadata | null });

/** A fork as history lists it (issue 29): `branch` left `parent_branch` at message seq `from_message_seq`. */
export interface StoredBranch {
  branch: number;
  parent_branch: number;
  from_message_seq: number;
}

/** One page of `GET /api/assistant/history` (CONTRACTS §2): oldest first, of the branch it names. */
export interface HistoryPage {
  items: StoredMessage[];
  next_before: string | null;
  ledger_seq?: number;
  /** The branch the conversation shows and continues on; `branch`: the one this page is of. */
  active_branch?: number;
  branch?: number;
  branches?: StoredBranch[];
}
