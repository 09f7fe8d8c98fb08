/**
 * The multi-tab gate: a run holds its conversation's lease while it streams and renews it; a
 * pause leaves it in state awaiting_confirmation, which a new run of the same user takes over
 * (its new message or confirm resolves the approval first).
 * @module
 */
import { releaseLease, renewLease, setLeaseState } from '../db/leases.ts';
import type { Queryable } from '../db/index.ts';

export class ConversationLease {
  readonly #db: Queryable;
  readonly #conversationId: string;
  readonly #holder: string;
  #timer: NodeJS.Timeout | undefined;

  private constructor(db: Queryable, conversationId: string, holder: string) {
    this.#db = db;
    this.#conversationId = conversationId;
    this.#holder = holder;
  }

  /** A lease `holder` took when its turn opened (db/turn-opening.ts, in the run's statement): keeps it renewed. */
  static held(db: Queryable, conversationId: string, holder: string, ttlS: number): ConversationLease {
    const lease = new ConversationLease(db, conversationId, holder);
    lease.#timer = setInterval(() => {
      renewLease(db, { conversationId, holder, ttlS }).catch(() => {});
    }, (ttlS * 1000) / 3);
    lease.#timer.unref();
    return lease;
  }

  /** The run paused for approval: the lease stays in state awaiting_confirmation until it expires. */
  async handOverToApproval(expiresAt: Date, tx: Queryable = this.#db): Promise<void> {
    this.#stopRenewing();
    const ttlS = Math.max(1, Math.ceil((expiresAt.getTime() - Date.now()) / 1000));
    await setLeaseState(tx, { conversationId: this.#conversationId, holder: this.#holder, state: 'awaiting_confirmation', ttlS });
  }

  /** `tx`: release with the run's last commit, so a client that saw the end never meets a held lease. */
  async release(tx: Queryable = this.#db): Promise<void> {
    this.#stopRenewing();
    await releaseLease(tx, { conversationId: this.#conversationId, holder: this.#holder });
  }

  #stopRenewing(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
