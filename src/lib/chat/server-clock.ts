/**
 * The server's time as this browser can know it. An approval's `expires_at` is the server's
 * clock; this browser's may be minutes off (issue 23: "Expires in 5:05" on a 300 s timeout).
 * Every API answer carries an HTTP `Date` header, stamped in whole seconds at some instant while
 * the request was out: each one bounds the offset (server minus local), and the bounds of all
 * answers together narrow it to well under a second.
 * @module
 */

export class ServerClock {
  /** Bounds on server time minus local time, in ms. */
  #low = -Infinity;
  #high = Infinity;
  readonly #local: () => number;

  constructor(local: () => number = () => Date.now()) {
    this.#local = local;
  }

  /** One answer: its Date header, and this browser's time when the request left and when the answer came. */
  observe(dateHeader: string | null | undefined, sentAt: number, receivedAt: number): void {
    const date = dateHeader ? Date.parse(dateHeader) : NaN;
    if (!Number.isFinite(date) || receivedAt < sentAt) return;
    // The server wrote the header at some moment of [date, date + 1 s) on its clock, while ours
    // read something in [sentAt, receivedAt].
    const low = date - receivedAt;
    const high = date + 1_000 - sentAt;
    if (low > this.#high || high < this.#low) {
      // No offset fits both this and what came before: a clock was set. Start again from here.
      this.#low = low;
      this.#high = high;
      return;
    }
    this.#low = Math.max(this.#low, low);
    this.#high = Math.min(this.#high, high);
  }

  /** The best estimate of server minus local time (0 until an answer was seen). */
  get offsetMs(): number {
    return Number.isFinite(this.#low) && Number.isFinite(this.#high) ? Math.round((this.#low + this.#high) / 2) : 0;
  }

  /** The server's time now, as far as this browser can tell. */
  now(): number {
    return this.#local() + this.offsetMs;
  }
}

/**
 * The time left to answer an approval: the server's deadline against the server's time, never
 * more than the approval's timeout (whatever a clock says) and never below 0. null without a
 * deadline.
 */
export function remainingMs(card: { expiresAt: string | null; timeoutS: number | null }, serverNow: number): number | null {
  const deadline = card.expiresAt ? Date.parse(card.expiresAt) : NaN;
  if (!Number.isFinite(deadline)) return null;
  const left = Math.max(0, deadline - serverNow);
  return card.timeoutS && card.timeoutS > 0 ? Math.min(left, card.timeoutS * 1_000) : left;
}
