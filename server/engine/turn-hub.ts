/**
 * The live side of one turn in this process: the turn's committed events so far, the answer text
 * streamed since the last commit, and the subscribers. A subscriber that attaches mid-answer
 * gets the committed events, then the answer so far as ONE partial, then what follows.
 * @module
 */
import { isCommitted, type LedgerEvent, type LiveEvent } from './events.ts';

export interface LiveListener {
  event(event: LiveEvent): void;
  /** The run ended: after run.finished, or with `failure` when it could not commit its end. */
  end(failure?: unknown): void;
}

export class TurnHub {
  readonly runId: string;
  readonly conversationId: string;
  readonly #committed: LedgerEvent[] = [];
  readonly #listeners = new Set<LiveListener>();
  #partial = '';
  #finished = false;

  constructor(runId: string, conversationId: string) {
    this.runId = runId;
    this.conversationId = conversationId;
  }

  get finished(): boolean {
    return this.#finished;
  }

  publish(event: LiveEvent): void {
    if (isCommitted(event)) {
      this.#committed.push(event);
      // A committed answer or card closes the streamed segment.
      this.#partial = '';
      if (event.kind === 'run.finished') this.#finished = true;
    } else this.#partial += event.payload.token;
    for (const listener of this.#listeners) listener.event(event);
    if (this.#finished) this.end();
  }

  /** Ends every subscriber (with `failure` when the run stopped without committing run.finished). */
  end(failure?: unknown): void {
    if (this.#finished && failure === undefined && this.#listeners.size === 0) return;
    this.#finished = true;
    for (const listener of this.#listeners) listener.end(failure);
    this.#listeners.clear();
  }

  /** The answer streamed since the last committed event, as one partial (or none). */
  partialSnapshot(): LiveEvent[] {
    return this.#partial ? [{ kind: 'partial', payload: { run_id: this.runId, token: this.#partial } }] : [];
  }

  /**
   * Attaches `listener` and returns what it missed: the run's committed events with
   * seq > afterSeq, then the partial snapshot. Synchronous, so nothing slips between.
   */
  subscribe(listener: LiveListener, afterSeq = 0): { missed: LiveEvent[]; ended: boolean; unsubscribe: () => void } {
    const missed: LiveEvent[] = [...this.#committed.filter((e) => e.seq > afterSeq), ...this.partialSnapshot()];
    if (!this.#finished) this.#listeners.add(listener);
    return { missed, ended: this.#finished, unsubscribe: () => this.#listeners.delete(listener) };
  }
}
