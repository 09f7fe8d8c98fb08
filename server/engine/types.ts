/**
 * The engine's inputs: a normalized turn (whatever transport it came over), the user it runs
 * for, and the storage that says whether an attached file is one of ours.
 * @module
 */
import type { ToolPolicy } from '../agent/run-tool-allowlist.ts';
import type { DecisionOrigin, TurnAction } from '../approvals/types.ts';
import type { EditedArguments, FileRef, GrantRequest } from '../../src/lib/wire/index.ts';

export type { DecisionOrigin, TurnAction };

/** A file a message carries: the wire module's one FileRef (the UI's too). */
export type { FileRef };

/** One submit, normalized by its transport adapter (Gradio /chat today). */
export interface TurnInput {
  text: string;
  files: FileRef[];
  conversationId: string | null;
  action: TurnAction | null;
  /** The client's idempotency key; the engine generates one when absent. */
  requestId: string | null;
  /** Which pending approval a confirm or deny decides; null: the only one pending. */
  approvalId: string | null;
  /** The client's own id of a new message (AG-UI), kept on its user.message; not part of the request hash. */
  clientMessageId?: string | null;
  /** `queue`: written for the next turn (an edge write, a queued message), kept on its user.message; not part of the request hash. */
  delivery?: 'queue' | null;
  /**
   * Who decides, when not the requester the turn runs as (the headless approvals API: a user with
   * approvals:decide), and the reason they gave. Recorded on the approval row.
   */
  decidedBy?: string | null;
  decisionNote?: string | null;
  /**
   * Where a decision came in, for its audit row (approvals/audit.ts): the transport's route and
   * the service that called on the user's behalf. Absent: Gradio /chat.
   */
  origin?: DecisionOrigin;
  /**
   * A retry of a turn whose process died (the dead turn's run id; issue 30): the thread goes on
   * from its checkpoint with no new input, and no user.message is stored. `text` is then only the
   * run's message as the request hash sees it.
   */
  retryOf?: string | null;
  /** A confirm's arguments as the approver edited them (issue 27 item 1); null: as the model proposed. */
  editedArgs?: EditedArguments | null;
  /** A confirm that also makes a standing grant ("Allow for 1 hour", issue 27 item 2). */
  grant?: GrantRequest | null;
  /** The message a regenerate or an edit starts from (issue 29 item 2). */
  messageId?: string | null;
}


/** What a transport attaches to a turn before it starts (the headless API: the run's stored policy). */
export interface TurnSetup {
  toolPolicy?: ToolPolicy | null;
  /** The caller's system messages, put before the agent's own. */
  callerSystem?: string | null;
  /**
   * The token the turn's tools act with instead of the submitter's (the headless API mints one for
   * the run's user per turn, so no turn starts with a token near its end).
   */
  userToken?: string;
}

export interface TurnUser {
  userId: string;
  /** The user's token, forwarded to the backend API by the agent's tools. */
  token: string;
}

/**
 * Where uploaded files live. Transports store uploads their own way (Gradio: under its data dir,
 * per owner); the engine only asks whether a reference is one this user may attach.
 */
export interface FileStorage {
  /** The absolute path of a stored upload of this user, or null when `path` is not one of theirs. */
  resolve(path: string, userId: string): Promise<string | null>;
}
