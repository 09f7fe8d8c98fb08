/**
 * The per-session message channel behind `/gradio_api/queue/data`, kept behind a small interface
 * so a PostgreSQL LISTEN/NOTIFY bus can replace the in-memory one (several gateway replicas).
 *
 * A session exists from its first join until a stream has delivered its last completion
 * (close_stream). Messages published before a stream attaches are buffered (Gradio does the same).
 * @module
 */

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

/** The contract every bus implementation keeps (see tests/unit/server/gradio/session-bus.test.ts). */
export interface SessionBus {
  /** Registers a joined event as pending, creating the session when new. */
  addEvent(sessionHash: string, eventId: string): void;
  /** Delivers (or buffers) a message; a terminal one removes its event from the pending set. */
  publish(sessionHash: string, message: BusMessage): void;
  /** Attaches the session's stream, replacing an earlier one; buffered messages come first. Null for an unknown session. */
  attach(sessionHash: string, sink: SessionSink): Attachment | null;
  /** Events joined and not yet completed. */
  pending(sessionHash: string): number;
  /** Whether a stream is attached. */
  attached(sessionHash: string): boolean;
  /** Drops a session with no stream attached, with its buffer and pending set (orphans, shutdown). */
  forget(sessionHash: string): void;
  /** Number of known sessions (for metrics and tests). */
  size(): number;
}

interface Session {
  pending: Set<string>;
  buffer: BusMessage[];
  sink: SessionSink | null;
}

/** The in-memory bus for one process. */
export function createMemorySessionBus(): SessionBus {
  const sessions = new Map<string, Session>();

  const deliver = (session: Session, message: BusMessage) => {
    if (message.terminal && message.eventId) session.pending.delete(message.eventId);
    session.sink!(message, session.pending.size);
  };

  return {
    addEvent(sessionHash, eventId) {
      let session = sessions.get(sessionHash);
      if (!session) {
        session = { pending: new Set(), buffer: [], sink: null };
        sessions.set(sessionHash, session);
      }
      session.pending.add(eventId);
    },
    publish(sessionHash, message) {
      const session = sessions.get(sessionHash);
      if (!session) return;
      if (session.sink) deliver(session, message);
      else session.buffer.push(message);
    },
    attach(sessionHash, sink) {
      const session = sessions.get(sessionHash);
      if (!session) return null;
      session.sink = sink;
      const buffered = session.buffer;
      session.buffer = [];
      for (const message of buffered) {
        if (session.sink !== sink) break;
        deliver(session, message);
      }
      return {
        detach() {
          if (session.sink === sink) session.sink = null;
          if (session.pending.size === 0 && session.buffer.length === 0 && !session.sink && sessions.get(sessionHash) === session) {
            sessions.delete(sessionHash);
          }
        },
      };
    },
    pending: (sessionHash) => sessions.get(sessionHash)?.pending.size ?? 0,
    attached: (sessionHash) => Boolean(sessions.get(sessionHash)?.sink),
    forget(sessionHash) {
      const session = sessions.get(sessionHash);
      if (session && !session.sink) sessions.delete(sessionHash);
    },
    size: () => sessions.size,
  };
}
