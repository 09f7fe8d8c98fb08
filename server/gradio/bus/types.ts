/**
 * The session bus contract: the per-session message channel behind `/gradio_api/queue/data`.
 * Two implementations keep it (memory-bus.ts for one process, pg-bus.ts for several replicas
 * sharing one PostgreSQL) and pass one contract suite (tests/helpers/bus-contract.ts).
 *
 * A session exists from its first join until a stream has delivered its last completion
 * (close_stream). Messages published before a stream attaches are buffered (Gradio does the same).
 * @module
 */
import type { CancelClaim, EventOwnership } from '../ownership.ts';

/** One frame for a session; `terminal` marks the event's completion. */
export interface BusMessage {
  eventId: string | null;
  frame: string;
  terminal: boolean;
}

/** Receives a session's messages; `pendingAfter` counts events still open after this one. */
export type SessionSink = (message: BusMessage, pendingAfter: number) => void;

/** Handle of an attached stream. */
export interface Attachment {
  detach(): void;
}

/** Handle of an open mailbox. */
export interface Mailbox {
  close(): Promise<void>;
}

/** Cancels an event that runs in this process (the claim was already checked). */
export type LocalCancel = (eventId: string) => void;

export type CancelOutcome = 'cancelled' | 'refused' | 'unknown';

/**
 * A curl call-API event waiting for its one reader (`GET /call/{api}/{event_id}`), which may come
 * to any replica: the session the call runs in, and who may read it.
 */
export interface CallRecord {
  apiName: string;
  sessionHash: string;
  owner: string | null;
}

/** The contract every bus implementation keeps. */
export interface SessionBus {
  /** Registers a joined event as pending, creating the session when new; resolves once every replica can see it. */
  addEvent(sessionHash: string, eventId: string, ownership: EventOwnership): Promise<void>;
  /** Delivers (or buffers) a message; a terminal one removes its event from the pending set. Order per process is kept. */
  publish(sessionHash: string, message: BusMessage): void;
  /**
   * Attaches the session's stream, replacing an earlier one (here or on another replica, whose
   * `onReplaced` then runs); buffered messages come first. Null for an unknown session.
   */
  attach(sessionHash: string, sink: SessionSink, onReplaced?: () => void): Promise<Attachment | null>;
  /** Events joined and not yet completed. */
  pending(sessionHash: string): number;
  /** Whether a stream is attached (on any replica). */
  attached(sessionHash: string): boolean;
  /** Drops a session with no stream attached, with its buffer and pending set (orphans, shutdown). */
  forget(sessionHash: string): void;
  /** Number of known sessions (for metrics and tests). */
  size(): number;
  /**
   * Cancels an event that runs on another replica: checks the claim against the event's owner and
   * fans the cancel out on its own channel. 'unknown' when no replica runs it.
   */
  cancelRemote(eventId: string, claim: CancelClaim): Promise<CancelOutcome>;
  /** Where cancels fanned out to this process land (set once by the queue). */
  onCancel(handler: LocalCancel): void;
  /**
   * Called when another replica dropped a session (its stream went away, or never came, or the
   * replica serving it died): this process stops its own events of that session (set once by the queue).
   */
  onForgotten(handler: (sessionHash: string) => void): void;
  /** Remembers a call-API event for `ttlMs` (past that its event was aborted as an orphan anyway). */
  putCall(eventId: string, call: CallRecord, ttlMs: number): Promise<void>;
  /**
   * Takes a call's session for its one reader (on any replica): null when unknown, expired, taken
   * already, or asked for under another endpoint or owner (then it stays for the right reader).
   */
  takeCall(eventId: string, apiName: string, owner: string | null): Promise<string | null>;
  /**
   * Opens a mailbox here: messages posted to `key` on any replica reach `deliver`, in the order
   * they were posted (the MCP `/sse` session whose stream this replica holds). `close` removes it.
   */
  openMailbox(key: string, owner: string | null, deliver: (payload: string) => void): Promise<Mailbox>;
  /** Posts to a mailbox wherever it is open: 'refused' for another owner, 'unknown' when none is open. */
  postMailbox(key: string, owner: string | null, payload: string): Promise<'sent' | 'refused' | 'unknown'>;
  /** Resolves once everything published so far has left this process (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}
