/**
 * The bus state as a state machine over operations: which events of a session are pending, what
 * is buffered, and whether its stream is attached here (a sink) or on another replica (a token).
 * The memory bus applies operations as they happen; the PostgreSQL bus applies them in the order
 * PostgreSQL delivers its notifications, which is the same on every replica, so every replica
 * holds the same state and any of them can serve the session's stream.
 * @module
 */
import type { BusMessage, SessionSink } from './types.ts';

/** An operation on the bus; the PostgreSQL bus sends these as NOTIFY payloads. */
export type BusOp =
  | { o: 'e'; s: string; e: string }
  | { o: 'm'; s: string; e: string | null; f: string; t: 0 | 1 }
  | { o: 'a'; s: string; k: string }
  | { o: 'd'; s: string; k: string }
  | { o: 'x'; s: string; by?: string }
  /** Replica `r` died: the streams it served are gone. */
  | { o: 'r'; r: string }
  /** A barrier: changes no state; its sender waits for it to come back (pg-bus.ts). */
  | { o: 'b'; k: string };

interface MirrorSession {
  pending: Set<string>;
  buffer: BusMessage[];
  /** The attachment token of the stream, wherever it is. */
  token: string | null;
  /** Set when the stream is attached in this process. */
  sink: SessionSink | null;
  onReplaced: (() => void) | null;
}

export class BusMirror {
  readonly #sessions = new Map<string, MirrorSession>();

  get size(): number {
    return this.#sessions.size;
  }

  has(sessionHash: string): boolean {
    return this.#sessions.has(sessionHash);
  }

  pending(sessionHash: string): number {
    return this.#sessions.get(sessionHash)?.pending.size ?? 0;
  }

  attached(sessionHash: string): boolean {
    return Boolean(this.#sessions.get(sessionHash)?.token);
  }

  /** Creates a session known from elsewhere (a replica that started after its join). */
  adopt(sessionHash: string, eventIds: readonly string[]): void {
    const session = this.#session(sessionHash);
    for (const id of eventIds) session.pending.add(id);
  }

  /** Applies one operation; returns the sessions it dropped whose events must now stop ('x', 'r'). */
  apply(op: BusOp): string[] {
    switch (op.o) {
      case 'e':
        this.#session(op.s).pending.add(op.e);
        return [];
      case 'm':
        this.#message(op.s, { eventId: op.e, frame: op.f, terminal: op.t === 1 });
        return [];
      case 'a': {
        const session = this.#sessions.get(op.s);
        if (!session || session.token === op.k) return [];
        // Another replica's stream took over: it delivered the buffer, and an older stream here ends.
        const replaced = session.onReplaced;
        session.sink = null;
        session.onReplaced = null;
        session.token = op.k;
        session.buffer = [];
        replaced?.();
        return [];
      }
      case 'd': {
        const session = this.#sessions.get(op.s);
        if (!session || session.token !== op.k || session.sink) return [];
        session.token = null;
        this.#dropIfIdle(op.s, session);
        return [];
      }
      case 'x': {
        const session = this.#sessions.get(op.s);
        if (!session || session.sink) return [];
        this.#sessions.delete(op.s);
        return [op.s];
      }
      case 'b':
        return [];
      case 'r': {
        // Its client saw the stream break (Gradio clients give up the session then): forget it,
        // rather than buffer frames nobody will read.
        const dropped: string[] = [];
        for (const [s, session] of this.#sessions) {
          if (session.sink || !session.token?.startsWith(`${op.r}:`)) continue;
          this.#sessions.delete(s);
          dropped.push(s);
        }
        return dropped;
      }
    }
  }

  /** Attaches a stream in this process; false for an unknown session. */
  attachHere(sessionHash: string, token: string, sink: SessionSink, onReplaced?: () => void): boolean {
    const session = this.#sessions.get(sessionHash);
    if (!session) return false;
    const replaced = session.onReplaced;
    session.sink = sink;
    session.token = token;
    session.onReplaced = onReplaced ?? null;
    replaced?.();
    const buffered = session.buffer;
    session.buffer = [];
    for (const message of buffered) {
      if (session.sink !== sink) break;
      this.#deliver(session, message);
    }
    return true;
  }

  /** Detaches the stream with this token, if it is still the session's one; forgets a finished session. */
  detachHere(sessionHash: string, token: string): void {
    const session = this.#sessions.get(sessionHash);
    if (!session || session.token !== token) return;
    session.sink = null;
    session.onReplaced = null;
    session.token = null;
    this.#dropIfIdle(sessionHash, session);
  }

  #message(sessionHash: string, message: BusMessage): void {
    const session = this.#sessions.get(sessionHash);
    if (!session) return;
    if (session.sink) this.#deliver(session, message);
    else {
      if (message.terminal && message.eventId) session.pending.delete(message.eventId);
      // Attached elsewhere: that replica delivers it; otherwise keep it for the stream to come.
      if (!session.token) session.buffer.push(message);
    }
  }

  #deliver(session: MirrorSession, message: BusMessage): void {
    if (message.terminal && message.eventId) session.pending.delete(message.eventId);
    session.sink!(message, session.pending.size);
  }

  #dropIfIdle(sessionHash: string, session: MirrorSession): void {
    if (session.pending.size === 0 && session.buffer.length === 0 && !session.token && this.#sessions.get(sessionHash) === session) {
      this.#sessions.delete(sessionHash);
    }
  }

  #session(sessionHash: string): MirrorSession {
    let session = this.#sessions.get(sessionHash);
    if (!session) this.#sessions.set(sessionHash, (session = { pending: new Set(), buffer: [], token: null, sink: null, onReplaced: null }));
    return session;
  }
}
