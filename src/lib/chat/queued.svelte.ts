/**
 * This tab's messages queued behind the running answer (issue 24 item 4). A message sent while
 * an answer streams goes out at once as its own /chat call; the gateway keeps the call open,
 * says `{type:"queued", position, request_id}`, and streams the message's turn when it starts.
 * Until then the message is listed here (under the running answer, with "Remove queued
 * message"); when its turn starts it leaves the list and the conversation follows it from the
 * ledger (`onStarted`), as any run another submission carries. Why a list apart from the view:
 * the reducer holds one running turn; a queued one is not part of the conversation until it starts.
 * @module
 */
import type { ChatRun, SubmitInput } from './transport.ts';
import type { FileRef } from './types.ts';

export interface QueuedMessage {
  /** This page's key for the row (the request id is known only once the gateway answered). */
  key: string;
  text: string;
  files: FileRef[];
  /** Set by the gateway's `queued` message: what removes it. */
  requestId: string | null;
  position: number | null;
}

export interface QueuedMessagesOptions {
  submit(input: SubmitInput): ChatRun;
  /** DELETE /api/agent/conversations/{id}/queue/{request_id}. */
  remove(conversationId: string, requestId: string): Promise<void>;
  /** A queued message's turn started (its call streams its answer now). */
  onStarted(conversationId: string): void;
  /** A queued message could not wait (the queue is full, say): what to tell the user. */
  onRefused(code: string, detail: string): void;
}

export class QueuedMessages {
  #items = $state.raw<QueuedMessage[]>([]);
  #options: QueuedMessagesOptions;
  /** Bumped when the conversation changes: calls of the one before are no longer shown. */
  #epoch = 0;

  constructor(options: QueuedMessagesOptions) {
    this.#options = options;
  }

  get items(): QueuedMessage[] {
    return this.#items;
  }

  /** Sends a message that will wait for its turn; its row shows at once. */
  add(input: SubmitInput): void {
    const key = crypto.randomUUID();
    this.#items = [...this.#items, { key, text: input.text, files: input.files, requestId: null, position: null }];
    void this.#follow(key, input, this.#epoch);
  }

  /** "Remove queued message": the gateway drops it before it starts (its call then ends). */
  async remove(conversationId: string, key: string): Promise<void> {
    const item = this.#items.find((i) => i.key === key);
    if (!item?.requestId) return;
    this.#drop(key);
    await this.#options.remove(conversationId, item.requestId).catch(() => undefined); // started meanwhile: it runs
  }

  /** The conversation changed: forget the rows (the messages still wait on the server). */
  reset(): void {
    this.#epoch++;
    this.#items = [];
  }

  async #follow(key: string, input: SubmitInput, epoch: number): Promise<void> {
    let started = false;
    const current = () => epoch === this.#epoch;
    try {
      for await (const e of this.#options.submit(input)) {
        if (!current()) return;
        if (e.type === 'failed') {
          const removed = !this.#items.some((i) => i.key === key);
          this.#drop(key);
          if (!started && !removed) this.#options.onRefused(e.code, e.detail);
          return;
        }
        const m = e.message.metadata;
        if (m?.type === 'queued') {
          this.#items = this.#items.map((i) => (i.key === key ? { ...i, requestId: m.request_id, position: m.position } : i));
        } else if (!started) {
          // Its turn started: the conversation shows it from the ledger from here.
          started = true;
          this.#drop(key);
          this.#options.onStarted(input.conversationId);
        }
      }
      if (current()) this.#drop(key);
    } catch {
      if (current()) this.#drop(key);
    }
  }

  #drop(key: string): void {
    this.#items = this.#items.filter((i) => i.key !== key);
  }
}
