/**
 * The multi-tab gate: a run holds its conversation's lease while it streams and renews it; a
 * pause hands it over to the pending approval (state awaiting_confirmation), which any new run of
 * the same user may take over (the new message or the confirm resolves the approval first).
 * @module
 */
import { getLease, releaseLease, renewLease, setLeaseState, tryTakeLease } from '../db/leases.ts';
import type { Queryable } from '../db/index.ts';

/** Holder name a paused run leaves on the lease. */
export const APPROVAL_HOLDER = 'approval';

export class ConversationLease {
  readonly #db: Queryable;
  readonly #conversationId: string;
  readonly #holder: string;
  readonly #ttlS: number;
  #timer: NodeJS.Timeout | undefined;

  private constructor(db: Queryable, conversationId: string, holder: string, ttlS: number) {
    this.#db = db;
    this.#conversationId = conversationId;
    this.#holder = holder;
    this.#ttlS = ttlS;
  }

  /** Takes the lease (taking over a paused run's), or returns null when another run streams. */
  static async acquire(db: Queryable, conversationId: string, holder: string, ttlS: number): Promise<ConversationLease | null> {
    const current = await getLease(db, conversationId);
    if (current && current.holder === APPROVAL_HOLDER) {
      await releaseLease(db, { conversationId, holder: APPROVAL_HOLDER });
    }
    const taken = await tryTakeLease(db, { conversationId, holder, state: 'streaming', ttlS });
    if (!taken) return null;
    const lease = new ConversationLease(db, conversationId, holder, ttlS);
    lease.#timer = setInterval(() => {
      renewLease(db, { conversationId, holder, ttlS }).catch(() => {});
    }, (ttlS * 1000) / 3);
    lease.#timer.unref();
    return lease;
  }

  /** The run paused for approval: the lease stays, held by the approval until it expires. */
  async handOverToApproval(expiresAt: Date): Promise<void> {
    this.#stopRenewing();
    const ttlS = Math.max(1, Math.ceil((expiresAt.getTime() - Date.now()) / 1000));
    await releaseLease(this.#db, { conversationId: this.#conversationId, holder: this.#holder });
    await tryTakeLease(this.#db, { conversationId: this.#conversationId, holder: APPROVAL_HOLDER, state: 'awaiting_confirmation', ttlS });
    await setLeaseState(this.#db, { conversationId: this.#conversationId, holder: APPROVAL_HOLDER, state: 'awaiting_confirmation' });
  }

  async release(): Promise<void> {
    this.#stopRenewing();
    await releaseLease(this.#db, { conversationId: this.#conversationId, holder: this.#holder });
  }

  #stopRenewing(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
